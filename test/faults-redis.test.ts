// Redis's bad days, with a private redis-server: stalled (DEBUG SLEEP), killed under use, absent at
// start. Every wait on it is bounded, authentication limits fail closed, request limits go on
// from what they counted, /ready says what is wrong, and start-up never hangs on it.
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import test from 'ava';
import { createClient } from '@redis/client';
import { freePort, redisUnavailableReason, startRedis, type TestRedis } from './helpers/redis.ts';
import { call, ROOT, startApp, type RunningApp } from './helpers/service.ts';
import { buildTestLibrary, removeTempDirs, tempDir } from './helpers/media-library.ts';
import { startInOneWindow } from './helpers/rate-window.ts';

const skip = redisUnavailableReason();
if (skip) console.log(skip);
const maybe = skip ? test.serial.skip : test.serial;

let redis: TestRedis;
let app: RunningApp;

test.before(async () => {
  if (skip) return;
  redis = await startRedis(['--enable-debug-command', 'yes']);
  const { root } = await buildTestLibrary();
  app = await startApp({
    SERVICES: 'skins,media', REDIS_URL: redis.url, TRUST_PROXY: 'true', MEDIA_DIR: root, DATA_DIR: await tempDir('faults-redis'), MEDIA_PASSWORD: 'open sesame',
    OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false',
  });
});
test.after.always(async () => {
  await app?.stop();
  await redis?.stop();
  await removeTempDirs();
});

const from = (ip: string, more: Record<string, string> = {}) => ({ headers: { 'x-forwarded-for': ip, ...more } });
const ready = () => call(`${app.urls.skins}/ready`);
const check = (body: { checks: Array<{ name: string; status: string }> }, name: string) => body.checks.find((c) => c.name === name)?.status;

maybe('a stalled Redis holds no request: each is answered while Redis still sleeps, and /ready says it is slow', async (t) => {
  t.like((await ready()).json, { status: 'ready' });
  const sleeper = createClient({ url: redis.url });
  await sleeper.connect();
  t.teardown(() => sleeper.quit());
  let asleep = true;
  const sleeping = sleeper.sendCommand(['DEBUG', 'SLEEP', '6']).finally(() => { asleep = false; });
  // Redis takes the command before the requests go: PING on another connection would wait.
  const answers = [];
  for (const path of ['/v1/decode?value=e30=', '/v1/sources', '/health']) {
    const r = await call(`${app.urls.skins}${path}`, from('198.51.100.60'));
    answers.push([path, r.status, asleep]);
  }
  const readiness = await ready();
  const media = await call(`${app.urls.media}/?img=photos&format=json`, from('198.51.100.60'));
  const duringSleep = asleep;
  await sleeping;
  t.deepEqual(answers, [['/v1/decode?value=e30=', 200, true], ['/v1/sources', 200, true], ['/health', 200, true]]);
  t.is(readiness.status, 200);
  t.is(readiness.json.status, 'degraded');
  t.is(check(readiness.json, 'redis'), 'degraded');
  t.is(media.status, 200);
  t.true(duringSleep, 'all of it before Redis woke');
  // Awake again: ready once more (the probe asks Redis at most once a second).
  let again = await ready();
  for (let i = 0; i < 50 && again.json.status !== 'ready'; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    again = await ready();
  }
  t.is(again.json.status, 'ready');
});

maybe('Redis killed: password checks fail closed, request limits go on from their count, and it reconnects', async (t) => {
  await startInOneWindow(30_000);
  const ip = '198.51.100.61';
  // 100 of the normal group's 120 counted in Redis.
  for (let i = 0; i < 100; i += 10) {
    const batch = await Promise.all(Array.from({ length: 10 }, () => call(`${app.urls.skins}/v1/decode?value=e30=`, from(ip))));
    t.deepEqual(batch.map((r) => r.status), batch.map(() => 200));
  }
  const wrong = await call(`${app.urls.media}/?sim=secret`, from(ip, { 'X-Media-Password': 'wrong' }));
  t.is(wrong.status, 403);
  const logged = app.logs.length;
  await redis.stop();

  const limited = [];
  for (let i = 0; i < 25; i += 1) limited.push((await call(`${app.urls.skins}/v1/decode?value=e30=`, from(ip))).status);
  t.deepEqual(limited, [...Array(20).fill(200), ...Array(5).fill(429)], 'the count went on from 100, not from 0');
  const guess = await call(`${app.urls.media}/?sim=secret`, from('198.51.100.62', { 'X-Media-Password': 'another guess' }));
  t.is(guess.status, 503);
  t.is(guess.json.code, 'overloaded');
  t.true(Number(guess.headers.get('retry-after')) >= 1);
  const storeFailed = app.logs.slice(logged).filter((l) => String(l.msg).startsWith('rate-limit store failed'));
  t.is(storeFailed.length, 1, 'the failing store is logged once, not once a request');
  const readiness = await ready();
  t.is(readiness.status, 200, 'a shared dependency degrades, it does not take the instance out');
  t.like(readiness.json, { status: 'degraded' });
  t.is(check(readiness.json, 'redis'), 'down');

  redis = await startRedis.onPort(redis.port, ['--enable-debug-command', 'yes']);
  let back = await ready();
  for (let i = 0; i < 100 && back.json.status !== 'ready'; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    back = await ready();
  }
  t.is(back.json.status, 'ready');
  t.is((await call(`${app.urls.media}/?sim=secret`, from('198.51.100.62', { 'X-Media-Password': 'open sesame' }))).status, 200);
  await app.waitForLog((l) => l.msg === 'rate-limit store answers again');
});

/** Starts `node api/main.ts` and resolves with its exit code and log lines (it never becomes ready here). */
function run(env: Record<string, string>, onLine: (entry: Record<string, unknown>, kill: (signal: NodeJS.Signals) => void) => void = () => {}) {
  const child = spawn(process.execPath, [path.join(ROOT, 'api/main.ts')], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', SKINS_PORT: '0', MEDIA_PORT: '0', SEARCH_PORT: '0', RENDER_WORKERS: '0', SERVICES: 'skins', ...env },
  });
  const lines: Array<Record<string, unknown>> = [];
  readline.createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      const entry = JSON.parse(line);
      lines.push(entry);
      onLine(entry, (signal) => child.kill(signal));
    } catch { /* not JSON */ }
  });
  return new Promise<{ code: number | null; lines: typeof lines }>((resolve) => child.once('close', (code) => resolve({ code, lines })));
}

maybe('Redis absent at start: start-up gives up after REDIS_START_TIMEOUT_MS naming REDIS_URL, and Ctrl-C ends the wait at once', async (t) => {
  const nothing = `redis://127.0.0.1:${await freePort()}`;
  const started = performance.now();
  const failed = await run({ REDIS_URL: nothing, REDIS_START_TIMEOUT_MS: '1500' });
  t.is(failed.code, 1);
  const line = failed.lines.find((l) => l.msg === 'start-up failed');
  t.regex(JSON.stringify(line), /REDIS_URL \(redis:\/\/127\.0\.0\.1:\d+\) did not answer within 1500 ms/);
  t.false(failed.lines.some((l) => l.msg === 'ready'));

  // Interrupted while it waits (a minute here): the process ends without waiting the stop deadline out.
  const interrupted = await run({ REDIS_URL: nothing, REDIS_START_TIMEOUT_MS: '60000' }, (entry, kill) => {
    if (entry.msg === 'starting') kill('SIGINT');
  });
  t.is(interrupted.code, 0);
  t.truthy(interrupted.lines.find((l) => l.msg === 'stopped during start-up'));
  t.true(performance.now() - started < 60_000, 'neither run waited for its deadline');
});
