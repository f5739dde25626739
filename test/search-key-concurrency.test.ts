// One API key's parallel searches are bounded per instance (SEARCH_KEY_CONCURRENCY): past it the
// key's next search is refused at once and not counted, while another key is served. The players
// source's upstream hangs, so the key's searches stay running for as long as the test needs them.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startFakeUpstream } from '../scripts/fake-upstream/server.ts';
import { writeSyntheticData } from '../scripts/search-data.ts';
import { call, startApp } from './helpers/service.ts';
import { until } from './helpers/poll.ts';
import { createSearchKey } from './helpers/search-keys.ts';

test('a key with SEARCH_KEY_CONCURRENCY searches running gets 429 for the next, uncounted; another key is served', async (t) => {
  const fake = await startFakeUpstream();
  fake.control({ hang: { official: true, external: true, bedrock: true } });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-key-concurrency-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const dataFile = path.join(dir, 'people.jsonl');
  const dataDir = path.join(dir, 'state');
  await writeSyntheticData(dataFile, 50, { seed: 5 });
  const app = await startApp({ SERVICES: 'search', SEARCH_DATA: dataFile, DATA_DIR: dataDir, SEARCH_KEY_CONCURRENCY: '2', SEARCH_TIMEOUT_MS: '120000', SEARCH_SOURCE_TIMEOUT_MS: '60000', ...fake.env });
  t.teardown(() => app.stop());
  const busy = createSearchKey(dataDir, 'busy', '--limit', '3');
  const other = createSearchKey(dataDir, 'other', '--limit', '10');
  const search = (query: string, type: string, key: string) =>
    call(`${app.urls.search}/v1/search?${new URLSearchParams({ query, type })}`, { headers: { 'x-api-key': key } });

  // Two player searches whose upstream calls hang: both are running once the fake has seen both.
  const running = [search('HangingOne', 'network_user', busy), search('HangingTwo', 'network_user', busy)];
  const asked = (name: string) => fake.requests().some((r) => `${r.path} ${r.body ?? ''}`.toLowerCase().includes(name.toLowerCase()));
  await until('both searches at the upstream', async () => asked('HangingOne') && asked('HangingTwo'), Boolean);
  const refused = await search('someone@example.com', 'email', busy);
  t.is(refused.status, 429, refused.text.slice(0, 300));
  t.is(refused.json.error.code, 'rate_limited');
  t.true(Number(refused.headers.get('retry-after')) >= 1);
  t.is((await search('someone@example.com', 'email', other)).status, 200, 'another key is served');

  // The hung searches end (their upstream goes away); the refused search cost no quota: the
  // key's third and last search is still allowed, and a fourth is over its limit.
  await fake.close();
  for (const r of await Promise.all(running)) t.is(r.status, 200, r.text.slice(0, 300));
  t.is((await search('someone@example.com', 'email', busy)).status, 200);
  t.is((await search('someone@example.com', 'email', busy)).json.error?.code, 'key_exhausted');
});
