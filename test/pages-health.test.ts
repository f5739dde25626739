// GET /health on all three services: the same core (status, version), each service's own
// details, no credentials, and the skins answer described in /openapi.json.
import path from 'node:path';
import test from 'ava';
import { removeTempDirs, tempDir } from './helpers/media-library.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';

let app: RunningApp;
test.before(async () => {
  const dir = await tempDir('pages-health');
  app = await startApp({ SERVICES: 'skins,media,search', MEDIA_DIR: path.join(dir, 'media'), DATA_DIR: path.join(dir, 'data') });
});
test.after.always(async () => {
  await app?.stop();
  await removeTempDirs();
});

test('every service answers /health with its status and version', async (t) => {
  const skins = await call(`${app.urls.skins}/health`);
  t.is(skins.status, 200);
  t.regex(skins.headers.get('content-type') ?? '', /json/);
  t.deepEqual(Object.keys(skins.json), ['status', 'service', 'version', 'uptime_s', 'render']);
  t.like(skins.json, { status: 'ok', service: 'skins', render: { workers: 0, pages_alive: 0 } });
  t.true(Number.isInteger(skins.json.uptime_s));
  t.is(skins.json.version, (await call(`${app.urls.skins}/v1/status`)).json.data.version);
  for (const service of ['media', 'search'] as const) {
    const other = await call(`${app.urls[service]}/health`);
    t.is(other.status, 200, service);
    t.like(other.json, { status: 'ok', version: skins.json.version }, service);
  }
  const doc = (await call(`${app.urls.skins}/openapi.json`)).json;
  t.true(doc.paths['/health'].servers.some((s: { 'x-service': string }) => s['x-service'] === 'skins'));
  t.deepEqual(Object.keys(doc.components.schemas.SkinsHealth.properties), Object.keys(skins.json));
});
