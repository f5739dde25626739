// Raw skin and cape endpoints, and the texture host allow-list (nothing off the list is fetched).
import { createHash } from 'node:crypto';
import test from 'ava';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins();
});
test.after.always(async () => {
  await h?.stop();
});

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

test('raw skin is the upstream PNG with image headers, an ETag and a 304', async (t) => {
  const { json } = await h.get('/v1/player/ClassicSteve');
  const r = await h.get('/v1/skin/ClassicSteve');
  t.is(r.status, 200);
  t.is(r.headers.get('content-type'), 'image/png');
  t.regex(r.headers.get('cache-control') ?? '', /^public, max-age=\d+, immutable$/);
  t.is(r.headers.get('access-control-allow-origin'), '*');
  t.true(r.bytes.subarray(0, 8).equals(PNG));
  const upstream = Buffer.from(await (await fetch(json.data.skin_url)).arrayBuffer());
  t.is(createHash('sha256').update(r.bytes).digest('hex'), createHash('sha256').update(upstream).digest('hex'));
  const etag = r.headers.get('etag')!;
  t.truthy(etag);
  const again = await h.get('/v1/skin/ClassicSteve', { headers: { 'if-none-match': etag } });
  t.is(again.status, 304);
  t.is(again.bytes.length, 0);
});

test.serial('download=1 adds an attachment header; the texture is cached by hash', async (t) => {
  h.fake.resetCalls();
  const r = await h.get('/v1/skin/SlimAlex?download=1');
  t.is(r.status, 200);
  t.regex(r.headers.get('content-disposition') ?? '', /attachment; filename="SlimAlex-skin.png"/);
  t.is(r.headers.get('x-cache'), 'MISS');
  const second = await h.get('/v1/skin/SlimAlex');
  t.is(second.headers.get('x-cache'), 'HIT');
  t.is(h.fake.calls()['official.texture'], 1);
});

test('cape endpoint serves the cape; players without one get no_texture', async (t) => {
  const cape = await h.get('/v1/cape/SlimAlex');
  t.is(cape.status, 200);
  t.true(cape.bytes.subarray(0, 8).equals(PNG));
  const none = await h.get('/v1/cape/ClassicSteve');
  t.is(none.status, 404);
  t.is(none.json.code, 'no_texture');
  const noSkin = await h.get('/v1/skin/NoSkin');
  t.is(noSkin.status, 404);
  t.is(noSkin.json.code, 'no_texture');
});

test('upload=0 ignores the skin-site upload and serves the official skin', async (t) => {
  const official = await h.get('/v1/skin/BothSources?source=official');
  const uploaded = await h.get('/v1/skin/BothSources?source=external');
  const fallback = await h.get('/v1/skin/BothSources?source=external&upload=0');
  t.false(official.bytes.equals(uploaded.bytes));
  t.true(fallback.bytes.equals(official.bytes));
});

test.serial('textures on hosts off the allow-list are never requested', async (t) => {
  h.fake.resetCalls();
  const evil = await h.get('/v1/skin/EvilTexture');
  t.is(evil.status, 502);
  t.is(evil.json.code, 'upstream_error');
  const redirect = await h.get('/v1/skin/RedirectSkin');
  t.is(redirect.status, 502, 'a redirect to another host is not followed');
  t.is(h.fake.calls().evil ?? 0, 0);
});

test('a texture that is not a PNG or is too large is refused', async (t) => {
  const notPng = await h.get('/v1/skin/NotPng');
  t.is(notPng.status, 502);
  t.is(notPng.json.code, 'upstream_error');
  const huge = await h.get('/v1/skin/HugeSkin');
  t.is(huge.status, 502);
  t.is(huge.json.code, 'upstream_error');
});
