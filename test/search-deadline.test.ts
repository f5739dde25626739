// The search service against the fake game upstream: players found through the skins clients,
// each source's own time limit and one deadline per search when the upstream hangs. Also: the admin API off without a token,
// and per-IP limits on unauthenticated failures. Serial: the tests steer one fake upstream.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startFakeUpstream, type FakeUpstream } from '../scripts/fake-upstream/server.ts';
import { writeSyntheticData } from '../scripts/search-data.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';
import { createSearchKey } from './helpers/search-keys.ts';

const TIMEOUT_MS = 1500;
const SOURCE_TIMEOUT_MS = 1000;
let fake: FakeUpstream;
let app: RunningApp;
let key: string;
let dir: string;

test.before(async () => {
  fake = await startFakeUpstream();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-search-deadline-'));
  const dataFile = path.join(dir, 'people.jsonl');
  const dataDir = path.join(dir, 'state');
  await writeSyntheticData(dataFile, 200, { seed: 5, extra: [
    { full_name: 'Slim Alex', username: 'SlimAlex', email: 'slim.alex@example.org' },
    // A second game name, so that the cross pass asks the hanging upstream again.
    { full_name: 'Hanging Hank', username: 'HangingHank', nick: 'HankAlt', email: 'hank@example.net' },
    { full_name: 'Hank Partner', email: 'hank@example.net' },
  ] });
  app = await startApp({
    SERVICES: 'search', SEARCH_DATA: dataFile, DATA_DIR: dataDir, SEARCH_TIMEOUT_MS: String(TIMEOUT_MS), SEARCH_SOURCE_TIMEOUT_MS: String(SOURCE_TIMEOUT_MS),
    UPSTREAM_TIMEOUT_MS: '60000', UPSTREAM_RETRIES: '0', PUBLIC_URL: 'http://skins.example.org', ...fake.env,
  });
  // No SEARCH_ADMIN_TOKEN: keys come from the CLI.
  key = createSearchKey(dataDir, 'deadline');
});
test.after.always(async () => {
  await app?.stop();
  await fake?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const search = (query: string, type: string, apiKey = key) =>
  call(`${app.urls.search}/v1/search?${new URLSearchParams({ query, type })}`, { headers: { 'x-api-key': apiKey } });

test.serial('the admin API is off without SEARCH_ADMIN_TOKEN', async (t) => {
  const r = await call(`${app.urls.search}/v1/admin/keys`, { headers: { authorization: 'Bearer anything' } });
  t.is(r.status, 404);
  t.is(r.json.error.code, 'admin_disabled');
});

test.serial('game players come through the skins upstream clients, with the skin address', async (t) => {
  const r = await search('SlimAlex', 'network_user');
  t.is(r.status, 200);
  t.false(r.json.timed_out);
  t.like(r.json.data.players, { outcome: 'completed', records: 1 });
  const player = r.json.results.find((x: { source: string }) => x.source === 'players');
  t.like(player.fields, { name: 'SlimAlex', source: 'official', model: 'slim' });
  t.is(player.fields.skin, `http://skins.example.org/v1/skin/${player.fields.uuid}`);
  t.truthy(r.json.results.find((x: { source: string }) => x.source === 'local_index'));
  t.deepEqual(r.json.smart_sections.players.map((p: { name: string }) => p.name), ['SlimAlex']);
});

test.serial('a hanging source ends at its own limit, the local index answers the cross pass, and the deadline caps the rest', async (t) => {
  fake.control({ hang: { official: true, external: true } });
  t.teardown(() => fake.control({ hang: { official: false, external: false } }));
  // The upstream never answers while hanging: the search returning at all shows nobody waited for it.
  const r = await search('HangingHank', 'network_user');
  t.is(r.status, 200);
  t.true(r.json.timed_out);
  t.like(r.json.data.players, { outcome: 'timed_out', reason: `over its time limit (${SOURCE_TIMEOUT_MS} ms)` });
  t.like(r.json.data.local_index, { outcome: 'completed', records: 1 });
  t.deepEqual(r.json.results.filter((x: { source: string }) => x.source === 'local_index').map((x: { fields: { full_name: string } }) => x.fields.full_name), ['Hanging Hank']);
  // Names are looked up as normalised (lower case); game names are case-insensitive.
  t.true(fake.requests().some((req) => `${req.path} ${req.body ?? ''}`.includes('hanginghank')), 'the upstream was asked and hung');

  // The main pass ended at the players' limit, so the cross pass ran on the local index's finds.
  const byEmail = r.json.cross_results['email:hank@example.net'];
  t.like(byEmail.data.local_index, { outcome: 'completed' });
  t.deepEqual(byEmail.results.filter((x: { source: string }) => x.source === 'local_index').map((x: { fields: { full_name: string } }) => x.fields.full_name), ['Hank Partner']);
  // The other game name asked the hanging upstream again, until the search's deadline.
  t.like(r.json.cross_results['network_user:hankalt'].data.players, { outcome: 'timed_out', reason: 'the search deadline passed' });
  const audit = app.logs.find((l) => l.msg === 'search audit' && l.timed_out === true);
  t.truthy(audit);
});

test.serial('unauthenticated failures are limited per client IP', async (t) => {
  // 30 failures a minute are allowed; the window is aligned to the clock, so a run that straddles
  // a minute boundary may need up to twice as many tries before the limit answers.
  let failures = 0;
  let limited: Awaited<ReturnType<typeof search>> | null = null;
  for (let i = 0; i < 62 && !limited; i++) {
    const r = await search('192.0.2.1', 'ip', `sk_wrong_${i}`);
    if (r.status === 401) failures += 1;
    else limited = r;
  }
  t.is(limited?.status, 429);
  t.is(limited?.json.error.code, 'rate_limited');
  t.truthy(limited?.headers.get('retry-after'));
  t.true(failures >= 30, String(failures));
  // A valid key still works from the same address.
  t.is((await search('192.0.2.1', 'ip')).status, 200);
});
