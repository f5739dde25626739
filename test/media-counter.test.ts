// The total call count on the landing page survives restarts: in a DATA_DIR file without
// Redis, in Redis when REDIS_URL is set (a private redis-server; skipped when there is none).
import test from 'ava';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createClient } from '@redis/client';
import { REDIS_CALLS_KEY } from '../api/media/counter.ts';
import { call, type RunningApp } from './helpers/service.ts';
import { redisUnavailableReason, startRedis } from './helpers/redis.ts';
import { removeTempDirs, startMedia, tempDir, writeCategory, writeImage } from './helpers/media-library.ts';

let root: string;
const running: RunningApp[] = [];

test.before(async () => {
  root = path.join(await tempDir('media-counter'), 'library');
  await writeImage(path.join(await writeCategory(root, 'one'), 'a.png'), { width: 20, height: 10 });
});
test.after.always(async () => {
  await Promise.all(running.map((a) => a.stop()));
  await removeTempDirs();
});

async function start(env: Record<string, string>): Promise<RunningApp> {
  const app = await startMedia({ MEDIA_DIR: root, ...env });
  running.push(app);
  return app;
}

async function makeCalls(app: RunningApp, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await call(`${app.urls.media}/?img=one${i % 2 ? '&format=json' : ''}`);
}

async function shownTotal(app: RunningApp): Promise<number> {
  const html = (await call(`${app.urls.media}/`)).text;
  return Number(/id="total-calls">(\d+)</.exec(html)![1]);
}

test('without Redis the count is kept in DATA_DIR and survives a restart', async (t) => {
  const dataDir = await tempDir('media-data');
  const first = await start({ DATA_DIR: dataDir });
  await makeCalls(first, 5);
  // Listing pages and permanent files are not calls.
  await call(`${first.urls.media}/categories`);
  t.is(await shownTotal(first), 5);
  t.is(await first.stop(), 0);
  t.deepEqual(JSON.parse(await fs.readFile(path.join(dataDir, 'media-calls.json'), 'utf8')), { calls: 5 });
  t.deepEqual((await fs.readdir(dataDir)).filter((f) => f.endsWith('.tmp')), []);

  const second = await start({ DATA_DIR: dataDir });
  t.is(await shownTotal(second), 5);
  await makeCalls(second, 2);
  t.is((await call(`${second.urls.media}/categories`)).json.totals.calls, 7);
});

test('only answered calls count: refused ones (unknown alias, no or wrong password, empty filter) do not', async (t) => {
  const app = await start({ DATA_DIR: await tempDir('media-data'), MEDIA_PASSWORD: 'pw' });
  await makeCalls(app, 2);
  const refused = ['?img=nope', '?sim=one', '?vid=one', '?img=one&orientation=portrait'];
  for (const query of refused) t.true((await call(`${app.urls.media}/${query}`)).status >= 400, query);
  t.is((await call(`${app.urls.media}/?sim=one`, { headers: { 'X-Media-Password': 'wrong' } })).status, 403);
  t.is(await shownTotal(app), 2);
});

// Without a redis-server binary the case is skipped by name, with the reason printed, not passed.
const noRedis = redisUnavailableReason();
if (noRedis) console.log(noRedis);
(noRedis ? test.skip : test)('with Redis the count lives in Redis and survives a restart', async (t) => {
  const redis = await startRedis();
  try {
    const first = await start({ DATA_DIR: await tempDir('media-data'), REDIS_URL: redis.url });
    await makeCalls(first, 4);
    t.is(await shownTotal(first), 4);
    await first.stop();
    const client = createClient({ url: redis.url });
    await client.connect();
    t.is(await client.get(REDIS_CALLS_KEY), '4');
    await client.quit();
    // Another DATA_DIR: the count can only come from Redis.
    const second = await start({ DATA_DIR: await tempDir('media-data'), REDIS_URL: redis.url });
    await makeCalls(second, 3);
    t.is(await shownTotal(second), 7);
  } finally {
    await Promise.all(running.splice(0).map((a) => a.stop()));
    await redis.stop();
  }
});
