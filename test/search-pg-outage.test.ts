// The database going away under the PostgreSQL backend: the service keeps answering from the
// sources it still has and reports `local_index` skipped, starts without it, and comes back by
// itself when the database does. The shared server is not stopped: the service reaches it through
// a TCP proxy the test cuts and restores.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { createDatabase, runImport, tcpProxy, type TcpProxy, type TestDatabase } from './helpers/postgres.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';
import { until } from './helpers/poll.ts';
import { createSearchKey } from './helpers/search-keys.ts';

const PERSON = { full_name: 'Ada Example', phone: '+1 202 555 0143', email: 'ada.example@example.org' };

let dir: string;
let db: TestDatabase;
let proxy: TcpProxy;
let app: RunningApp;
let key: string;
let env: Record<string, string>;

test.before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-search-pg-outage-'));
  await fs.writeFile(path.join(dir, 'people.jsonl'), `${JSON.stringify(PERSON)}\n`);
  db = await createDatabase();
  const imported = await runImport(db.url, path.join(dir, 'people.jsonl'));
  if (imported.code !== 0) throw new Error(imported.stderr);
  proxy = await tcpProxy();
  env = { SERVICES: 'search', DATA_DIR: path.join(dir, 'state'), SEARCH_DATABASE_URL: proxy.url(db.url), OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false' };
  app = await startApp(env);
  key = createSearchKey(env.DATA_DIR, 'outage');
});

test.after.always(async () => {
  await app?.stop();
  await proxy?.close();
  await db?.drop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const search = (service: RunningApp, query: string) =>
  call(`${service.urls.search}/v1/search?${new URLSearchParams({ query, pretty: '0' })}`, { headers: { 'x-api-key': key } });
const sourceState = async (service: RunningApp) =>
  (await call(`${service.urls.search}/health`)).json.sources.find((s: { id: string }) => s.id === 'local_index');


test.serial('the database going away: the other sources answer, local_index is skipped, and it comes back without a restart', async (t) => {
  const before = await search(app, PERSON.phone);
  t.like(before.json.data.local_index, { outcome: 'completed', records: 1 });

  await proxy.cut();
  const during = await search(app, PERSON.phone);
  t.is(during.status, 200);
  t.like(during.json.data.local_index, { outcome: 'skipped' });
  t.is(during.json.data.local_index.reason, 'the database is unavailable');
  t.like(during.json.data.phone_analyser, { outcome: 'completed' });
  t.is(during.json.count, 1);
  t.like(await sourceState(app), { available: false });
  t.like(await app.waitForLog((l) => l.msg === 'search database unavailable; the source is skipped until it answers'), { level: 'warn' });
  const ready = (await call(`${app.urls.search}/ready`)).json;
  t.is(ready.status, 'degraded');
  t.like(ready.checks.find((c: { name: string }) => c.name === 'search_database'), { critical: false, status: 'degraded' });
  const index = (await call(`${app.urls.search}/health`)).json.index;
  t.like(index, { records: 1, data_files: [{ file: 'people.jsonl', rows_indexed: 1 }] });

  await proxy.restore();
  const after = await until('local_index back', () => search(app, PERSON.phone), (r) => r.json.data.local_index.outcome === 'completed');
  t.like(after.json.data.local_index, { records: 1 });
  t.like(await sourceState(app), { available: true, reason: null });
  t.like((await call(`${app.urls.search}/health`)).json.index.last_rebuild, { ok: true, error: null });
  t.like((await call(`${app.urls.search}/ready`)).json.checks.find((c: { name: string }) => c.name === 'search_database'), { status: 'ok', detail: '1 files' });
});

test.serial('a service started while the database is away starts at once and picks it up when it answers', async (t) => {
  await proxy.cut();
  const late = await startApp(env);
  try {
    t.like((await call(`${late.urls.search}/health`)).json, { status: 'ok', index: null });
    const state = await sourceState(late);
    t.false(state.available);
    t.is(state.reason, 'the database is unavailable');
    t.like((await search(late, PERSON.email)).json.data, { local_index: { outcome: 'skipped' }, email_analyser: { outcome: 'completed' } });
    await proxy.restore();
    const back = await until('local_index back', () => search(late, PERSON.email), (r) => r.json.data.local_index.outcome === 'completed');
    t.deepEqual(back.json.results.filter((r: { source: string }) => r.source === 'local_index').map((r: { ref: string }) => r.ref), ['people.jsonl:1']);
  } finally {
    await late.stop();
  }
});
