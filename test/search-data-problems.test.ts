// Operators' real data: values no parser foresaw (IPv6 zone ids), broken rows, spreadsheet CSV
// and national phone numbers never stop the start or a rebuild; every skip is counted per file
// in /health and logged with its file and line.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { ConfigError, loadConfig } from '../api/config.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';
import { createSearchKey } from './helpers/search-keys.ts';

let app: RunningApp;
let key: string;
let dir: string;
let dataDir: string;

const POISONED = [
  JSON.stringify({ full_name: 'Zone Keeper', ip: 'fe80::1%eth0.100', email: 'zone.keeper@example.org' }),
  JSON.stringify({ note: 'ff02::5678%pvc1.3', login: 'zone_two', last_ip: '[fe80::2%25eth1]:22' }),
  '{"truncated": ',
].join('\n');

test.before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-search-problems-'));
  dataDir = path.join(dir, 'state');
  const data = path.join(dir, 'data');
  await fs.mkdir(data);
  await fs.writeFile(path.join(data, 'network.jsonl'), POISONED);
  // A Chinese Excel export: semicolons, a byte order mark, national numbers.
  await fs.writeFile(path.join(data, 'contacts.csv'), '\uFEFFfull_name;mobile;email\r\nWang Xiaoming;131 2345 6789;wang.xm@example.org\r\n');
  app = await startApp({ SERVICES: 'search', SEARCH_DATA: data, SEARCH_DEFAULT_REGION: 'CN', DATA_DIR: dataDir, OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false' });
  key = createSearchKey(dataDir, 'problems');
});
test.after.always(async () => {
  await app?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const search = (query: string, type = 'auto') =>
  call(`${app.urls.search}/v1/search?${new URLSearchParams({ query, type })}`, { headers: { 'x-api-key': key } });
const localNames = (r: Awaited<ReturnType<typeof search>>) =>
  r.json.results.filter((x: { source: string }) => x.source === 'local_index').map((x: { fields: Record<string, string> }) => x.fields.full_name ?? x.fields.login);
const dataFile = async (name: string) =>
  (await call(`${app.urls.search}/health`)).json.index.data_files.find((f: { file: string }) => f.file === name);

test.serial('a poisoned data file does not stop the start: its good rows are indexed, the bad one counted and logged', async (t) => {
  const health = (await call(`${app.urls.search}/health`)).json;
  t.like(health, { status: 'ok', default_region: 'CN', index: { files: 2, records: 3, malformed: 1, last_rebuild: { ok: true, error: null } } });
  t.like(await dataFile('network.jsonl'), { rows_indexed: 2, rows_skipped: 1, values_rejected: 0, last_error: 'line 3: not JSON' });
  t.like(await dataFile('contacts.csv'), { rows_indexed: 1, rows_skipped: 0, last_error: null });
  t.regex((await dataFile('network.jsonl')).indexed_at, /^\d{4}-\d\d-\d\dT/);
  t.like(await app.waitForLog((l) => l.msg === 'search data problem'), { file: 'network.jsonl', line: 3, reason: 'not JSON' });
});

test.serial('an IPv6 address with a zone id is a query like any other', async (t) => {
  const r = await search('fe80::1%eth0.100');
  t.is(r.status, 200);
  t.like(r.json, { search_type: 'ip', query: 'fe80::1' });
  t.deepEqual(localNames(r), ['Zone Keeper']);
  t.like(r.json.data.ip_analyser, { outcome: 'completed' });
  t.deepEqual(localNames(await search('fe80::2', 'ip')), ['zone_two']);
});

test.serial('national numbers in the data and in the query are read in SEARCH_DEFAULT_REGION', async (t) => {
  const national = await search('131 2345 6789');
  t.like(national.json, { search_type: 'phone', query: '+8613123456789', assumed_region: 'CN' });
  t.deepEqual(localNames(national), ['Wang Xiaoming']);
  const international = await search('+86 131 2345 6789');
  t.is(international.json.assumed_region, undefined);
  t.deepEqual(localNames(international), ['Wang Xiaoming']);
});

test.serial('a poisoned file added while running: the next rebuild still indexes its good rows', async (t) => {
  await fs.writeFile(path.join(dir, 'data', 'late.jsonl'), `${POISONED}\n${JSON.stringify({ full_name: 'Late Comer', email: 'late.comer@example.net' })}\n`);
  // The watcher rebuilds in the background; /health names the file once a build has read it.
  const until = Date.now() + 15_000;
  let late = await dataFile('late.jsonl');
  while (!late && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    late = await dataFile('late.jsonl');
  }
  t.like(late, { rows_indexed: 3, rows_skipped: 1, last_error: 'line 3: not JSON' });
  t.like((await call(`${app.urls.search}/health`)).json.index, { files: 3, malformed: 2, last_rebuild: { ok: true } });
  t.deepEqual(localNames(await search('late.comer@example.net')), ['Late Comer']);
  t.deepEqual(localNames(await search('fe80::1%eth0.100')), ['Zone Keeper', 'Zone Keeper']);
});

test('SEARCH_DEFAULT_REGION and SEARCH_SOURCE_TIMEOUT_MS are checked at start', (t) => {
  t.is(loadConfig({}).search.defaultRegion, 'US');
  t.is(loadConfig({ SEARCH_DEFAULT_REGION: 'de' }).search.defaultRegion, 'DE');
  t.is(loadConfig({ SEARCH_TIMEOUT_MS: '3000' }).search.sourceTimeoutMs, 1500);
  const error = t.throws(() => loadConfig({ SEARCH_DEFAULT_REGION: 'XX', SEARCH_TIMEOUT_MS: '1000', SEARCH_SOURCE_TIMEOUT_MS: '1000', SEARCH_AUDIT_SECRET: 'short' }), { instanceOf: ConfigError });
  t.is(error.problems.length, 3);
  t.regex(error.problems.join('\n'), /SEARCH_DEFAULT_REGION.*"XX"/);
  t.regex(error.problems.join('\n'), /SEARCH_SOURCE_TIMEOUT_MS must be below SEARCH_TIMEOUT_MS/);
  t.regex(error.problems.join('\n'), /SEARCH_AUDIT_SECRET/);
});
