// 2D avatars (no browser): the face's 8x8 texels with the hat over them, scaled with hard
// edges, square or circle, on a background colour or transparent.
import test from 'ava';
import sharp from 'sharp';
import { renderAvatar, type AvatarOptions } from '../renderer/avatar-2d.ts';
import { normalizeSkin, type NormalizedSkin } from '../renderer/skin-normalize.ts';
import { drawSkin } from '../scripts/fake-upstream/skin-art.ts';
import { partFaces } from '../shared/skin-layout.ts';
import { decodePng, pixel, saveArtifact, type Picture } from './helpers/png.ts';

let skin: NormalizedSkin;
test.before(async () => {
  skin = await normalizeSkin(await drawSkin({}));
});

const face = partFaces('head', 'inner').front;
const hat = partFaces('head', 'outer').front;
const texel = (s: NormalizedSkin, x: number, y: number) => [...s.data.subarray((y * s.size + x) * 4, (y * s.size + x) * 4 + 4)];

async function avatar(name: string, o: Partial<AvatarOptions> = {}, from = skin): Promise<Picture> {
  const png = await renderAvatar(from, { size: 64, shape: 'square', helm: false, bg: null, ...o });
  saveArtifact('renderer', name, png);
  return decodePng(png);
}

test('every face texel lands in its own square, first texel top left', async (t) => {
  const p = await avatar('avatar-nohelm');
  t.deepEqual([p.width, p.height], [64, 64]);
  for (let y = 0; y < 8; y += 1) {
    for (let x = 0; x < 8; x += 1) {
      const want = texel(skin, face.x + x, face.y + y);
      t.deepEqual(pixel(p, x * 8, y * 8), want);
      t.deepEqual(pixel(p, x * 8 + 7, y * 8 + 7), want);
    }
  }
});

test('the hat covers the face where it has texels and lets it through its holes', async (t) => {
  const p = await avatar('avatar-helm', { helm: true });
  t.deepEqual(pixel(p, 4, 4), texel(skin, hat.x, hat.y), 'hat texel (0, 0)');
  t.deepEqual(pixel(p, 12, 4), texel(skin, face.x + 1, face.y), 'hole at (1, 0): the face');
  // A half-transparent hat texel is blended over the face.
  const raw = Buffer.from(skin.data);
  raw[(hat.y * 64 + hat.x) * 4 + 3] = 128;
  const half = await normalizeSkin(await sharp(raw, { raw: { width: 64, height: 64, channels: 4 } }).png().toBuffer());
  const blended = pixel(await avatar('avatar-helm-blend', { helm: true }, half), 4, 4);
  const under = texel(skin, face.x, face.y);
  const over = texel(skin, hat.x, hat.y);
  for (let c = 0; c < 3; c += 1) t.true(Math.abs(blended[c] - (over[c] * 128 + under[c] * 127) / 255) <= 1);
  t.is(blended[3], 255);
});

test('sizes 8 to 512, any integer; HD skins give their finer texels', async (t) => {
  for (const size of [8, 9, 100, 512]) {
    const p = await avatar(`avatar-${size}`, { size });
    t.deepEqual([p.width, p.height], [size, size]);
    t.deepEqual(pixel(p, size - 1, size - 1), texel(skin, face.x + 7, face.y + 7), `${size}: last texel`);
  }
  const hd = await normalizeSkin(await drawSkin({ scale: 2 }));
  const p = await avatar('avatar-hd', {}, hd);
  for (const [x, y] of [[0, 0], [3, 7], [15, 15]]) t.deepEqual(pixel(p, x * 4 + 1, y * 4 + 1), texel(hd, face.x * 2 + x, face.y * 2 + y));
});

test('circle: transparent corners, opaque inside', async (t) => {
  const p = await avatar('avatar-circle', { size: 100, shape: 'circle', helm: true });
  for (const [x, y] of [[0, 0], [99, 0], [0, 99], [99, 99], [10, 10]]) t.is(pixel(p, x, y)[3], 0, `corner ${x},${y}`);
  for (const [x, y] of [[50, 50], [50, 1], [1, 50], [98, 50], [50, 98]]) t.is(pixel(p, x, y)[3], 255, `inside ${x},${y}`);
  let inside = 0;
  for (let i = 3; i < p.data.length; i += 4) if (p.data[i] === 255) inside += 1;
  t.true(Math.abs(inside - Math.PI * 50 * 50) < 100, `${inside} opaque pixels`);
  // The hat's hole at texel (5, 0) shows the face.
  t.deepEqual(pixel(p, 69, 6), texel(skin, face.x + 5, face.y));
});

test('circle with a background: the colour fills the corners, the face stays inside', async (t) => {
  const plain = await avatar('avatar-circle-plain', { size: 64, shape: 'circle', helm: true });
  const p = await avatar('avatar-circle-bg', { size: 64, shape: 'circle', bg: '336699', helm: true });
  for (const [x, y] of [[0, 0], [63, 0], [0, 63], [63, 63], [6, 6]]) t.deepEqual(pixel(p, x, y), [0x33, 0x66, 0x99, 255], `corner ${x},${y}`);
  // Inside the circle both are the face (with its hat), pixel for pixel.
  for (const [x, y] of [[32, 32], [32, 1], [1, 32], [62, 32], [44, 6]]) t.deepEqual(pixel(p, x, y), pixel(plain, x, y), `inside ${x},${y}`);
  let coloured = 0;
  for (let i = 0; i < p.data.length; i += 4) if (p.data[i + 3] === 255) coloured += 1;
  t.is(coloured, 64 * 64, 'no pixel is left transparent');
});

test('a background fills what the face leaves transparent', async (t) => {
  // A skin whose face texel (0, 0) is fully transparent (the normaliser keeps the base opaque, so build it raw).
  const raw = Buffer.from(skin.data);
  raw[(face.y * 64 + face.x) * 4 + 3] = 0;
  const holed: NormalizedSkin = { ...skin, data: raw, hash: 'holed' };
  t.is(pixel(await avatar('avatar-hole', {}, holed), 2, 2)[3], 0);
  t.deepEqual(pixel(await avatar('avatar-hole-bg', { bg: '00ff80' }, holed), 2, 2), [0, 255, 128, 255]);
});

/** Nearest neighbour of the face drawn one pixel a texel: what every size must show. */
async function scaledFromNative(t: import('ava').ExecutionContext, from: NormalizedSkin, o: Omit<AvatarOptions, 'size' | 'shape'>, size: number): Promise<void> {
  const side = from.size / 8;
  const native = await decodePng(await renderAvatar(from, { ...o, size: side, shape: 'square' }));
  const square = await decodePng(await renderAvatar(from, { ...o, size, shape: 'square' }));
  const circle = await decodePng(await renderAvatar(from, { ...o, size, shape: 'circle' }));
  const outside = o.bg ? [...Buffer.from(o.bg, 'hex'), 255] : [0, 0, 0, 0];
  let wrong = 0;
  for (let y = 0; y < size; y += 1) {
    for (let x = 0; x < size; x += 1) {
      const want = pixel(native, Math.floor((x * side) / size), Math.floor((y * side) / size));
      if (pixel(square, x, y).join() !== want.join()) wrong += 1;
      const c = pixel(circle, x, y);
      if (c.join() !== want.join() && c.join() !== outside.join()) wrong += 1;
    }
  }
  t.is(wrong, 0, `${from.size} px skin, ${size} px, ${JSON.stringify(o)}`);
}

test('every pixel at every tested size is the nearest texel, palette or RGBA', async (t) => {
  const hd = await normalizeSkin(await drawSkin({ scale: 2 }));
  // A face of 1,024 distinct colours cannot be a palette image: the RGBA path draws it.
  const big = await normalizeSkin(await sharp(await drawSkin({ scale: 4 })).raw().toBuffer({ resolveWithObject: true })
    .then(({ data, info }) => {
      for (let y = 32; y < 64; y += 1) for (let x = 32; x < 64; x += 1) data.writeUInt32BE((((y << 8) | x) << 8) | 255, (y * info.width + x) * 4);
      return sharp(data, { raw: { width: info.width, height: info.height, channels: 4 } }).png().toBuffer();
    }));
  const meta = async (from: NormalizedSkin) => (await sharp(await renderAvatar(from, { size: 128, shape: 'square', helm: true, bg: null })).metadata());
  t.is((await meta(skin)).isPalette, true, 'a 64 px skin is a palette image');
  t.is((await meta(big)).isPalette, false, 'more than 256 colours stay RGBA');
  for (const from of [skin, hd, big]) {
    for (const size of [9, 64, 100, 255, 512]) {
      for (const o of [{ helm: true, bg: null }, { helm: false, bg: null }, { helm: true, bg: '3a7bd5' }]) await scaledFromNative(t, from, o, size);
    }
  }
});

test('the scanline buffer kept between avatars leaves nothing of a larger one in a smaller one', async (t) => {
  const other = await normalizeSkin(await drawSkin({ seed: 7 }));
  const small = { size: 24, shape: 'square', helm: true, bg: null } as const;
  const first = await renderAvatar(other, small);
  // A larger avatar first, RGBA-sized scanlines and a circle on a colour, then the small one again.
  await renderAvatar(skin, { size: 512, shape: 'circle', helm: true, bg: 'ff00ff' });
  t.deepEqual(await renderAvatar(other, small), first);
});
