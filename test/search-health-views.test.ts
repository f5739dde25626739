// Search /health shows data-file names, row problems and settings to the operator only (issue
// #39), decided as /metrics decides (METRICS_TOKEN, or this machine without a forwarding header)
// or with SEARCH_ADMIN_TOKEN; anyone else gets the summary: status, version and counts.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { call, startApp, type RunningApp } from './helpers/service.ts';

const ADMIN = 'healthViews-Zq4Lm8XkR2tNp7WcV9Hy';
const METRICS = 'healthViews-metrics-Bx3Kd8PqZ1mW';
const FILE = 'secret-customers-2026.jsonl';

let dir: string;
let data: string;
let secured: RunningApp;
let open: RunningApp;

test.before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-search-health-'));
  data = path.join(dir, 'data');
  await fs.mkdir(data);
  await fs.writeFile(path.join(data, FILE), `${JSON.stringify({ full_name: 'Ada Example', email: 'ada@example.org' })}\n{"truncated": \n`);
  const env = { SERVICES: 'search', SEARCH_DATA: data, SEARCH_ADMIN_TOKEN: ADMIN, OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false', TRUST_PROXY: '1' };
  [secured, open] = await Promise.all([
    startApp({ ...env, METRICS_TOKEN: METRICS, DATA_DIR: path.join(dir, 'state-1') }),
    startApp({ ...env, METRICS_TOKEN: '', DATA_DIR: path.join(dir, 'state-2') }),
  ]);
});
test.after.always(async () => {
  await secured?.stop();
  await open?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const health = (app: RunningApp, headers: Record<string, string> = {}) => call(`${app.urls.search}/health`, { headers });

function isDetail(t: import('ava').ExecutionContext, answer: Awaited<ReturnType<typeof health>>, what: string): void {
  t.is(answer.status, 200, what);
  t.true(answer.text.includes(FILE), `${what}: names the data file`);
  t.like(answer.json, { status: 'ok', admin_api: 'on', index: { files: 1, records: 1, malformed: 1 } }, what);
  t.true(Array.isArray(answer.json.index.data_files) && Array.isArray(answer.json.sources), what);
}

function isSummary(t: import('ava').ExecutionContext, answer: Awaited<ReturnType<typeof health>>, what: string): void {
  t.is(answer.status, 200, what);
  t.false(answer.text.includes(FILE), `${what}: no data-file name`);
  t.false(answer.text.includes('truncated'), `${what}: no row problem`);
  t.deepEqual(Object.keys(answer.json).sort(), ['index', 'sources_available', 'sources_total', 'status', 'uptime_s', 'version'], what);
  t.deepEqual(answer.json.index, { files: 1, records: 1, values: answer.json.index.values, malformed: 1 }, what);
  t.true(answer.json.sources_total >= answer.json.sources_available, what);
  t.is(answer.headers.get('cache-control'), 'no-store', what);
}

test('with METRICS_TOKEN: its bearer or SEARCH_ADMIN_TOKEN gets the detail, anyone else the summary', async (t) => {
  isDetail(t, await health(secured, { authorization: `Bearer ${METRICS}` }), 'metrics token');
  isDetail(t, await health(secured, { authorization: `Bearer ${ADMIN}` }), 'admin token');
  isSummary(t, await health(secured), 'no token, even from this machine');
  isSummary(t, await health(secured, { authorization: `Bearer ${METRICS}x` }), 'a wrong token');
  isSummary(t, await health(secured, { authorization: 'Bearer ', 'x-forwarded-for': '203.0.113.9' }), 'an empty token');
});

test('without METRICS_TOKEN: this machine gets the detail, a forwarded request the summary unless it bears the admin token', async (t) => {
  isDetail(t, await health(open), 'loopback');
  isSummary(t, await health(open, { 'x-forwarded-for': '203.0.113.9' }), 'through a proxy');
  isSummary(t, await health(open, { forwarded: 'for=203.0.113.9' }), 'Forwarded header');
  isDetail(t, await health(open, { 'x-forwarded-for': '203.0.113.9', authorization: `Bearer ${ADMIN}` }), 'admin token through a proxy');
});
