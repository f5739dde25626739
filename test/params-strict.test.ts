// Parameters are read strictly and the same way everywhere: plain decimal numbers, each parameter
// once, the size in the path or the query but not both.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { drawSkin } from '../scripts/fake-upstream/skin-art.ts';
import { call } from './helpers/service.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
test.before(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skinfarm-params-'));
  h = await startSkins({ SERVICES: 'skins,media,search', MEDIA_DIR: dir, DATA_DIR: dir });
});
test.after.always(() => h?.stop());

test('numbers are plain decimals: hex, exponents, padding and leading zeros are 400', async (t) => {
  for (const size of ['0x40', '1e2', '%2064', '064', '64.0', '+64', '']) {
    const r = await h.get(`/v1/avatar/Ranger?size=${size}`);
    t.is(r.status, size === '' ? 200 : 400, `size=${size}`);
  }
  for (const yaw of ['1e1', '0x10', '.5', '5.', '-']) t.is((await h.get(`/v1/avatar/Ranger?yaw=${yaw}`)).status, 400, `yaw=${yaw}`);
  t.is((await h.get('/v1/avatar/Ranger/064')).status, 400, 'in the path too');
  t.is((await h.get('/v1/avatar/Ranger?size=64&yaw=-12.5')).status, 200);
});

test('media and search read their parameters as skins does: the same switches, the same errors', async (t) => {
  const { media, search } = h.app.urls;
  for (const url of [`${h.base}/v1/uuid/Ranger?pretty=2`, `${media}/?img=photos&redirect=2`, `${search}/v1/types?pretty=yes`]) {
    const r = await call(url);
    t.is(r.status, 400, url);
    t.regex(r.text, /(pretty|redirect) must be 1 or 0/, url);
  }
  for (const url of [`${media}/?img=a&img=b`, `${search}/v1/types?pretty=0&pretty=1`]) t.is((await call(url)).status, 400, url);
});

test('a parameter given twice is 400, as is a size in both the path and the query', async (t) => {
  for (const path of ['/v1/avatar/Ranger?size=64&size=128', '/v1/player/Ranger?source=official&source=external', '/v1/avatar/Ranger/64?size=64', '/v1/uuid/Ranger?pretty=0&pretty=1']) {
    const r = await h.get(path);
    t.is(r.status, 400, path);
    t.is(r.json.code, 'bad_request', path);
  }
});

test('an upload form field given twice, or also in the query, is 400', async (t) => {
  const skin = new Blob([new Uint8Array(await drawSkin({}))], { type: 'image/png' });
  const twice = new FormData();
  twice.set('file', skin, 'skin.png');
  twice.append('yaw', '10');
  twice.append('yaw', '20');
  t.is((await h.get('/v1/render/64', { method: 'POST', body: twice })).status, 400);
  const both = new FormData();
  both.set('file', skin, 'skin.png');
  both.set('yaw', '10');
  t.is((await h.get('/v1/render/64?yaw=20', { method: 'POST', body: both })).status, 400);
});
