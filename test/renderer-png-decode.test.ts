// The small PNG reader must give exactly sharp's pixels for every file it accepts, and leave
// everything else to sharp. Files come from sharp's encoder and from a hand-made writer that
// uses each row filter and each colour type, tRNS included.
import test from 'ava';
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { decodeSimplePng } from '../renderer/png-decode.ts';
import { chunk, SIGNATURE } from '../renderer/png-encode.ts';
import { normalizeSkin } from '../renderer/skin-normalize.ts';
import { drawSkin } from '../scripts/fake-upstream/skin-art.ts';

const sharpRgba = async (png: Buffer) => (await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true }));

/** A PNG of raw samples; row y uses filter y % 5 (so every filter is exercised), `idats` splits the data. */
function handMade(opts: { width: number; height: number; colourType: number; samples: Buffer; plte?: Buffer; trns?: Buffer; depth?: number; interlace?: number; idats?: number }): Buffer {
  const { width, height, colourType, samples } = opts;
  const bpp = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colourType]!;
  const stride = width * bpp;
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y += 1) {
    const filter = y % 5;
    const row = Buffer.alloc(stride + 1);
    row[0] = filter;
    for (let x = 0; x < stride; x += 1) {
      const at = (yy: number, xx: number) => (yy < 0 || xx < 0 ? 0 : samples[yy * stride + xx]);
      const a = at(y, x - bpp), b = at(y - 1, x), c = at(y - 1, x - bpp);
      const p = a + b - c;
      const paeth = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
      const predictor = [0, a, b, (a + b) >> 1, paeth][filter];
      row[x + 1] = (samples[y * stride + x] - predictor) & 0xff;
    }
    rows.push(row);
  }
  const data = deflateSync(Buffer.concat(rows));
  const parts = opts.idats ?? 1;
  const step = Math.ceil(data.length / parts);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = opts.depth ?? 8;
  ihdr[9] = colourType;
  ihdr[12] = opts.interlace ?? 0;
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', ihdr),
    ...(opts.plte ? [chunk('PLTE', opts.plte)] : []),
    ...(opts.trns ? [chunk('tRNS', opts.trns)] : []),
    ...Array.from({ length: parts }, (_, i) => chunk('IDAT', data.subarray(i * step, (i + 1) * step))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const noise = (length: number, seed: number, mod = 256) => {
  const out = Buffer.alloc(length);
  let s = seed;
  for (let i = 0; i < length; i += 1) {
    s = (s * 1103515245 + 12345) >>> 0;
    // Runs of equal values too, so filters meet both flat and busy rows.
    out[i] = i % 7 < 3 && i > 0 ? out[i - 1] : (s >>> 16) % mod;
  }
  return out;
};

test('files it reads give exactly the pixels sharp gives', async (t) => {
  const skin = await drawSkin({});
  const files: Array<[string, Buffer]> = [
    ['drawn skin (sharp RGBA)', skin],
    ['legacy 64x32', await drawSkin({ legacy: true })],
    ['HD 128', await drawSkin({ scale: 2 })],
    ['sharp palette', await sharp(skin).png({ palette: true, colours: 40 }).toBuffer()],
    ['sharp RGB, no alpha', await sharp(skin).removeAlpha().png().toBuffer()],
    ['sharp grey', await sharp(skin).removeAlpha().toColourspace('b-w').png().toBuffer()],
    ['sharp grey + alpha', await sharp(skin).toColourspace('b-w').png().toBuffer()],
    ['sharp, no compression', await sharp(skin).png({ compressionLevel: 0 }).toBuffer()],
    ['RGBA, every filter, 3 IDATs', handMade({ width: 64, height: 64, colourType: 6, samples: noise(64 * 64 * 4, 1), idats: 3 })],
    ['RGB, every filter', handMade({ width: 64, height: 32, colourType: 2, samples: noise(64 * 32 * 3, 2) })],
    ['RGB with a transparent colour key', handMade({ width: 64, height: 64, colourType: 2, samples: noise(64 * 64 * 3, 3, 4), trns: Buffer.from([0, 1, 0, 2, 0, 3]) })],
    ['grey with a transparent key', handMade({ width: 64, height: 64, colourType: 0, samples: noise(64 * 64, 4, 8), trns: Buffer.from([0, 5]) })],
    ['grey + alpha, every filter', handMade({ width: 64, height: 64, colourType: 4, samples: noise(64 * 64 * 2, 5) })],
    ['palette with partial tRNS', handMade({ width: 64, height: 64, colourType: 3, samples: noise(64 * 64, 6, 16), plte: noise(16 * 3, 7), trns: Buffer.from([0, 128, 255]) })],
  ];
  for (const [what, png] of files) {
    const ours = decodeSimplePng(png, 1024);
    t.truthy(ours, `${what}: read without sharp`);
    const theirs = await sharpRgba(png);
    t.is(ours!.width, theirs.info.width, what);
    t.is(ours!.height, theirs.info.height, what);
    t.true(ours!.data.equals(theirs.data), `${what}: same pixels`);
  }
});

test('files it does not read are left to sharp, which still decodes or refuses them', async (t) => {
  const skin = await drawSkin({});
  const sixteenBit = await sharp(skin).toColourspace('rgb16').png().toBuffer();
  const interlaced = await sharp(skin).png({ progressive: true }).toBuffer();
  const withProfile = await sharp(skin).withIccProfile('p3').png().toBuffer();
  for (const [what, png] of [['16-bit', sixteenBit], ['interlaced', interlaced], ['ICC profile', withProfile]] as const) {
    t.is(decodeSimplePng(png, 1024), null, what);
    const normalized = await normalizeSkin(png);
    t.is(normalized.size, 64, `${what}: sharp decodes it`);
  }
  // A big side goes to sharp, whose own pixel limit then applies.
  t.is(decodeSimplePng(handMade({ width: 2048, height: 2, colourType: 0, samples: Buffer.alloc(4096) }), 1024), null);
});

test('damaged or inflated files answer null here and are judged by sharp, never a crash', async (t) => {
  const good = handMade({ width: 64, height: 64, colourType: 6, samples: noise(64 * 64 * 4, 9) });
  const truncated = good.subarray(0, good.length - 40);
  // More data than the header promises (a small "zip bomb").
  const bomb = Buffer.concat([good.subarray(0, 33), chunk('IDAT', deflateSync(Buffer.alloc(50_000_000))), chunk('IEND', Buffer.alloc(0))]);
  const rows = Buffer.alloc((64 + 1) * 64);
  rows[0] = 9;
  const invalidFilter = Buffer.concat([good.subarray(0, 8), chunk('IHDR', Buffer.from([0, 0, 0, 64, 0, 0, 0, 64, 8, 0, 0, 0, 0])), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
  const paletteOutOfRange = handMade({ width: 64, height: 64, colourType: 3, samples: Buffer.alloc(64 * 64, 200), plte: noise(4 * 3, 11) });
  // sharp reads these (inflating stops at the size the header promises; a missing palette entry is black).
  for (const [what, png] of [['bomb', bomb], ['palette index out of range', paletteOutOfRange]] as const) {
    t.is(decodeSimplePng(png, 1024), null, what);
    t.is((await normalizeSkin(png)).size, 64, what);
  }
  for (const [what, png] of [['truncated', truncated], ['invalid filter', invalidFilter]] as const) {
    t.is(decodeSimplePng(png, 1024), null, what);
    await t.throwsAsync(normalizeSkin(png), { message: /cannot be decoded|not 64x64/ }, what);
  }
});
