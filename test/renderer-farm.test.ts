// The render farm on its own: real Chromium pages in Piscina workers, crash recovery, a bounded
// queue, normalisation of legacy and broken skins.
import test from 'ava';
import sharp from 'sharp';
import { RenderFarm } from '../renderer/farm.ts';
import { normalizeCape, normalizeSkin } from '../renderer/skin-normalize.ts';
import { drawCape, drawSkin, faceColor } from '../scripts/fake-upstream/skin-art.ts';
import { ApiError } from '../shared/errors.ts';
import { silentLogger } from '../shared/log.ts';
import { partFaces } from '../shared/skin-layout.ts';

const job = async (yaw = 0) => ({
  kind: 'render' as const, skin: await normalizeSkin(await drawSkin({})), slim: false, size: 64, yaw, pitch: 10,
  shadow: true, outer: true, bg: null,
});

test.serial('a killed browser is replaced and rendering goes on', async (t) => {
  const farm = await RenderFarm.create({ workers: 1, chromiumPath: null, gpu: 'off', queueLimit: 16, jobTimeoutMs: 20_000 }, silentLogger);
  t.teardown(() => farm.close());
  t.truthy(await farm.render(await job()));
  t.true(farm.info().webglRenderer.length > 0);
  const pid = farm.browserPid();
  t.truthy(pid);
  process.kill(pid!, 'SIGKILL');
  const png = await farm.render(await job(45));
  t.true(png.subarray(1, 4).equals(Buffer.from('PNG')));
  t.is(farm.stats().browserRestarts, 1);
  t.not(farm.browserPid(), pid);
});

test.serial('a full queue answers overloaded at once', async (t) => {
  const farm = await RenderFarm.create({ workers: 1, chromiumPath: null, gpu: 'off', queueLimit: 2, jobTimeoutMs: 20_000, batchSize: 1 }, silentLogger);
  t.teardown(() => farm.close());
  const base = await job();
  const outcomes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => farm.render({ ...base, yaw: i })));
  const refused = outcomes.filter((o) => o.status === 'rejected');
  t.true(refused.length > 0);
  for (const o of refused) {
    const error = (o as PromiseRejectedResult).reason;
    t.true(error instanceof ApiError);
    t.is(error.code, 'overloaded');
    t.is(error.status, 503);
    t.true(error.retryAfter! >= 1);
  }
  t.true(outcomes.some((o) => o.status === 'fulfilled'));
});

test('legacy skins: left limbs are mirrored copies of the right ones', async (t) => {
  const skin = await normalizeSkin(await drawSkin({ legacy: true }));
  t.is(skin.size, 64);
  t.true(skin.legacy);
  const texel = (x: number, y: number) => [...skin.data.subarray((y * 64 + x) * 4, (y * 64 + x) * 4 + 4)];
  const right = partFaces('rightLeg', 'inner').front;
  const left = partFaces('leftLeg', 'inner').front;
  // Column 0 of the right leg's front lands in the last column of the left leg's front.
  t.deepEqual(texel(left.x + left.w - 1, left.y), texel(right.x, right.y));
  t.deepEqual(texel(left.x, left.y + 5), texel(right.x + right.w - 1, right.y + 5));
  // Outer and inner sides trade places: the left leg's outer (left) side is the right leg's outer (right) side.
  t.deepEqual(texel(partFaces('leftLeg', 'inner').left.x, 53), texel(partFaces('rightLeg', 'inner').right.x + 3, 21));
  t.deepEqual(texel(36, 52), texel(44 + 3, 20), 'arm front mirrored');
});

test('slim is guessed from the pixels; alpha rules apply', async (t) => {
  t.true((await normalizeSkin(await drawSkin({ slim: true }))).slimGuess);
  t.false((await normalizeSkin(await drawSkin({ slim: false }))).slimGuess);
  const skin = await normalizeSkin(await drawSkin({}));
  const body = partFaces('body', 'inner').front;
  t.is(skin.data[(body.y * 64 + body.x) * 4 + 3], 255, 'base layer forced opaque');
  const hat = partFaces('head', 'outer').front;
  t.is(skin.data[(hat.y * 64 + hat.x + 1) * 4 + 3], 0, 'hat checker stays transparent');
  const solidHat = await sharp({ create: { width: 64, height: 32, channels: 4, background: { r: 10, g: 20, b: 30, alpha: 1 } } }).png().toBuffer();
  const legacy = await normalizeSkin(solidHat);
  t.is(legacy.data[(hat.y * 64 + hat.x) * 4 + 3], 0, 'an all-opaque legacy hat is made transparent');
  t.deepEqual([...faceColor('head', 'inner', 'front')].length, 4);
});

test('HD skins keep their resolution; capes are padded; broken files are invalid_skin', async (t) => {
  t.is((await normalizeSkin(await drawSkin({ scale: 2 }))).size, 128);
  const cape = await normalizeCape(await drawCape({ legacy: true }));
  t.is(cape.width, 64);
  t.is(cape.height, 32);
  for (const bad of [Buffer.from('not a png'), await sharp({ create: { width: 60, height: 60, channels: 4, background: '#000' } }).png().toBuffer()]) {
    const error = await t.throwsAsync(() => normalizeSkin(bad));
    t.is((error as ApiError).code, 'invalid_skin');
  }
});
