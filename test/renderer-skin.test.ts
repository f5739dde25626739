// Texture normalisation (no browser): legacy conversion, HD sizes, the game's alpha rules, the
// slim guess, capes, content hashes, refusals; and the built-in default skins.
import test from 'ava';
import sharp from 'sharp';
import { defaultSkin } from '../renderer/default-skins.ts';
import { normalizeCape, normalizeSkin, type NormalizedSkin } from '../renderer/skin-normalize.ts';
import { drawCape, drawSkin } from '../scripts/fake-upstream/skin-art.ts';
import { RenderError } from '../renderer/errors.ts';
import { DEFAULT_SKIN_NAMES, partFaces } from '../shared/skin-layout.ts';

const texel = (skin: NormalizedSkin, x: number, y: number) => [...skin.data.subarray((y * skin.size + x) * 4, (y * skin.size + x) * 4 + 4)];
const solid = (width: number, height: number, alpha = 1) =>
  sharp({ create: { width, height, channels: 4, background: { r: 10, g: 20, b: 30, alpha } } }).png().toBuffer();

test('legacy 64x32 skins: 64x64 with the left limbs as mirrored copies of the right ones', async (t) => {
  const skin = await normalizeSkin(await drawSkin({ legacy: true }));
  t.is(skin.size, 64);
  t.is(skin.data.length, 64 * 64 * 4);
  t.true(skin.legacy);
  for (const [right, left] of [['rightLeg', 'leftLeg'], ['rightArm', 'leftArm']] as const) {
    const r = partFaces(right, 'inner');
    const l = partFaces(left, 'inner');
    // Each row of a face is reversed: column 0 of the right limb lands in the last column.
    for (const face of ['front', 'back', 'top', 'bottom'] as const) {
      t.deepEqual(texel(skin, l[face].x + l[face].w - 1, l[face].y), texel(skin, r[face].x, r[face].y), `${left} ${face}`);
      t.deepEqual(texel(skin, l[face].x, l[face].y + 2), texel(skin, r[face].x + r[face].w - 1, r[face].y + 2), `${left} ${face}`);
    }
    // The outer sides trade places with the inner ones: the left limb's left side is the right limb's right side, mirrored.
    t.deepEqual(texel(skin, l.left.x, l.left.y + 1), texel(skin, r.right.x + r.right.w - 1, r.right.y + 1), `${left} outer side`);
    t.deepEqual(texel(skin, l.right.x, l.right.y + 1), texel(skin, r.left.x + r.left.w - 1, r.left.y + 1), `${left} inner side`);
  }
});

test('HD skins keep their resolution (128x128, and legacy 128x64 becomes 128x128)', async (t) => {
  const hd = await normalizeSkin(await drawSkin({ scale: 2 }));
  t.is(hd.size, 128);
  t.false(hd.legacy);
  const legacyHd = await normalizeSkin(await drawSkin({ scale: 2, legacy: true }));
  t.is(legacyHd.size, 128);
  t.true(legacyHd.legacy);
  const r = partFaces('rightLeg', 'inner').front;
  const l = partFaces('leftLeg', 'inner').front;
  t.deepEqual(texel(legacyHd, (l.x + l.w) * 2 - 1, l.y * 2), texel(legacyHd, r.x * 2, r.y * 2), 'mirrored at 2 texels per unit');
});

test('alpha: base layer forced opaque, hat holes kept, an all-opaque legacy hat made transparent', async (t) => {
  const skin = await normalizeSkin(await drawSkin({}));
  const body = partFaces('body', 'inner').front;
  t.is(texel(skin, body.x, body.y)[3], 255);
  t.is(texel(skin, 0, 0)[3], 255, 'unused corner of the head region is opaque too');
  const hat = partFaces('head', 'outer').front;
  t.is(texel(skin, hat.x + 1, hat.y)[3], 0, 'hat checker hole');
  t.is(texel(skin, hat.x, hat.y)[3], 255);
  const legacy = await normalizeSkin(await solid(64, 32));
  t.is(texel(legacy, hat.x, hat.y)[3], 0, 'solid legacy hat cleared');
  t.is(texel(legacy, 8, 8)[3], 255);
  const modern = await normalizeSkin(await solid(64, 64));
  t.is(texel(modern, hat.x, hat.y)[3], 255, 'only legacy skins lose a solid hat');
  const translucentBase = await normalizeSkin(await solid(64, 64, 0.2));
  t.is(texel(translucentBase, body.x, body.y)[3], 255);
});

test('slim is guessed from the texels a 3-wide arm leaves unused', async (t) => {
  t.true((await normalizeSkin(await drawSkin({ slim: true }))).slimGuess);
  t.false((await normalizeSkin(await drawSkin({}))).slimGuess);
  t.false((await normalizeSkin(await drawSkin({ legacy: true }))).slimGuess);
});

test('the hash is of the pixels, not of the file', async (t) => {
  const png = await drawSkin({});
  const again = await sharp(png).png({ compressionLevel: 1 }).toBuffer();
  t.false(png.equals(again));
  t.is((await normalizeSkin(png)).hash, (await normalizeSkin(again)).hash);
  t.not((await normalizeSkin(png)).hash, (await normalizeSkin(await drawSkin({ seed: 3 }))).hash);
});

test('capes: 64x32 kept, legacy 22x17 and 46x22 padded, HD kept', async (t) => {
  const cape = await normalizeCape(await drawCape({}));
  t.deepEqual([cape.width, cape.height], [64, 32]);
  const legacy = await normalizeCape(await drawCape({ legacy: true }));
  t.deepEqual([legacy.width, legacy.height, legacy.data.length], [64, 32, 64 * 32 * 4]);
  t.deepEqual([...legacy.data.subarray((1 * 64 + 1) * 4, (1 * 64 + 1) * 4 + 4)], [...cape.data.subarray((1 * 64 + 1) * 4, (1 * 64 + 1) * 4 + 4)]);
  t.is(legacy.data[(20 * 64 + 30) * 4 + 3], 0, 'padding is transparent');
  t.deepEqual([(await normalizeCape(await solid(46, 22))).width, (await normalizeCape(await solid(128, 64))).width], [64, 128]);
});

test('bad files are invalid_skin: not a PNG, a broken PNG, wrong sizes, over 2 MB', async (t) => {
  const png = await drawSkin({});
  const bad: Array<[string, Buffer]> = [
    ['text', Buffer.from('not a png at all')],
    ['jpeg', await sharp(png).jpeg().toBuffer()],
    ['truncated', png.subarray(0, 60)],
    ['60x60', await solid(60, 60)],
    ['64x48', await solid(64, 48)],
    ['2048x2048', await solid(2048, 2048)],
    ['over 2 MB', Buffer.concat([png, Buffer.alloc(2 * 1024 * 1024)])],
  ];
  for (const [what, file] of bad) {
    const error = await t.throwsAsync(() => normalizeSkin(file), undefined, what);
    t.true(error instanceof RenderError, what);
    t.is((error as RenderError).kind, 'invalid_texture', what);
  }
  const square = await solid(30, 30);
  t.is(((await t.throwsAsync(() => normalizeCape(square))) as RenderError).kind, 'invalid_texture');
});

test('default skins: nine characters, slim and classic, our own art, cached', (t) => {
  const hashes = new Set<string>();
  for (const name of DEFAULT_SKIN_NAMES) {
    for (const slim of [true, false]) {
      const skin = defaultSkin(name, slim);
      t.is(skin.size, 64);
      t.is(skin.slimGuess, slim, name);
      t.is(defaultSkin(name, slim), skin, 'cached');
      t.is(skin.data[(8 * 64 + 8) * 4 + 3], 255, `${name} has a face`);
      hashes.add(skin.hash);
    }
  }
  t.is(hashes.size, DEFAULT_SKIN_NAMES.length * 2);
  t.is(defaultSkin('nobody'), defaultSkin('steve'), 'unknown names fall back to steve');
});
