// Texture texels packed for the page (renderer/texel-pack.ts) and unpacked there
// (renderer/page/texels.js): every visible texel comes back as it was, in fewer bytes.
import test from 'ava';
import { packTexels } from '../renderer/texel-pack.ts';
import { unpackTexels } from '../renderer/page/texels.js';

/** A width x width RGBA texture of `colours` opaque colours over a transparent half whose RGB is noise. */
function texture(width: number, colours: number, seed = 1): Uint8Array {
  const data = new Uint8Array(width * width * 4);
  let x = seed;
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0);
  for (let i = 0; i < width * width; i += 1) {
    if (i % 2 === 1) {
      // Invisible: alpha 0, any colour.
      data.set([next() & 255, next() & 255, next() & 255, 0], i * 4);
    } else {
      const c = (i / 2) % colours;
      data.set([c & 255, (c >> 8) & 255, 200, c % 3 === 0 ? 128 : 255], i * 4);
    }
  }
  return data;
}

/** The texture as the page must see it: transparent texels may be blanked, nothing else may change. */
const visible = (data: Uint8Array) => Array.from({ length: data.length / 4 }, (_, i) => (data[i * 4 + 3] === 0 ? 0 : Buffer.from(data.subarray(i * 4, i * 4 + 4)).readUInt32LE()));

for (const [colours, index] of [[30, 1], [255, 1], [256, 2], [900, 2]] as const) {
  test(`a 64x64 skin of ${colours} colours and transparency travels as a palette and ${index} byte(s) a texel, and unpacks to the same visible texels`, (t) => {
    const data = texture(64, colours);
    const packed = packTexels(data);
    t.not(packed.palette, null);
    t.is(Buffer.from(packed.palette!, 'base64').length, (colours + 1) * 4, 'its colours and transparent');
    t.is(Buffer.from(packed.base64, 'base64').length, 64 * 64 * index);
    const rgbaBase64 = (64 * 64 * 4 * 4) / 3;
    t.true(packed.base64.length + packed.palette!.length < rgbaBase64 * (index === 1 ? 0.35 : 0.75), `${packed.base64.length + packed.palette!.length} characters against ${rgbaBase64} as RGBA`);
    const out = unpackTexels(packed, new Uint8Array(64 * 64 * 4));
    t.deepEqual(visible(out), visible(data));
  });
}

test('a texture of too many colours goes as RGBA, byte for byte', (t) => {
  const data = new Uint8Array(64 * 64 * 4);
  for (let i = 0; i < 64 * 64; i += 1) data.set([i & 255, i >> 8, 7, 255], i * 4);
  const packed = packTexels(data);
  t.is(packed.palette, null);
  t.deepEqual(unpackTexels(packed, new Uint8Array(data.length)), data);
});

test('a view at an odd offset of a larger store (as a worker receives one) packs the same as a copy of it', (t) => {
  const data = texture(64, 40, 9);
  const store = new Uint8Array(data.length + 3);
  store.set(data, 3);
  t.deepEqual(packTexels(store.subarray(3)), packTexels(data));
});
