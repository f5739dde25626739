// Start-up as a person meets it: until a port serves, the log says what it waits for (Redis, the
// render farm), and `listening` comes only when the address answers. A start that cannot succeed
// ends with one log line that says what to change and a non-zero exit code, not a stack trace: a
// bad setting (78, every problem named), a port already taken or a Redis that never answers (1).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import test from 'ava';
import { loadConfig } from '../api/config.ts';
import { until } from './helpers/poll.ts';
import { freePort, redisUnavailableReason, startRedis } from './helpers/redis.ts';
import { call, ROOT, startApp } from './helpers/service.ts';

type Entry = Record<string, unknown>;

const BASE_ENV = { HOST: '127.0.0.1', SKINS_PORT: '0', MEDIA_PORT: '0', SEARCH_PORT: '0', RENDER_WORKERS: '0', SESSION_SECRET: 'test-session-secret-0123456789' };

/** Runs `node api/main.ts` to its end: exit code, JSON log lines in order and stderr; `onEntry` may signal it. */
async function runToEnd(env: Record<string, string>, onEntry: (entry: Entry, child: ChildProcess) => void = () => {}) {
  const child = spawn(process.execPath, [path.join(ROOT, 'api/main.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...BASE_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const entries: Entry[] = [];
  const stderr: string[] = [];
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    const entry = JSON.parse(line) as Entry;
    entries.push(entry);
    onEntry(entry, child);
  });
  readline.createInterface({ input: child.stderr }).on('line', (line) => stderr.push(line));
  const [code] = await once(child, 'close');
  return { code: code as number | null, entries, stderr };
}

const waitingForRedis = (entry: Entry) => typeof entry.msg === 'string' && entry.msg.startsWith('waiting for Redis');

const redisMissing = redisUnavailableReason();
const withRedis = redisMissing ? test.skip : test;
if (redisMissing) console.log(redisMissing);

test('a bad setting stops the process with code 78, naming the problem', async (t) => {
  const error = await t.throwsAsync(startApp({ SKINS_PORT: 'eighty', RENDER_GPU: 'sometimes' }));
  t.regex(error!.message, /exited with 78/);
  t.regex(error!.message, /SKINS_PORT/);
  t.regex(error!.message, /RENDER_GPU/);
});

test('a port in use: exit 1 with one line that names the setting to change, and no stack', async (t) => {
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => taken.close());
  const port = (taken.address() as net.AddressInfo).port;
  for (const [service, setting] of [['skins', 'SKINS_PORT'], ['media', 'MEDIA_PORT'], ['search', 'SEARCH_PORT']]) {
    const { code, entries, stderr } = await runToEnd({ SERVICES: 'skins,media,search', [setting]: String(port) });
    t.is(code, 1, service);
    const errors = entries.filter((entry) => entry.level === 'error');
    t.is(errors.length, 1, JSON.stringify(entries));
    t.is(errors[0].msg, 'start-up failed');
    t.regex(String(errors[0].reason), new RegExp(`^127\\.0\\.0\\.1:${port} is already in use \\(EADDRINUSE\\): set ${setting} to a free port`));
    t.notRegex(JSON.stringify(errors[0]), /stack|\\n/, 'one line, no stack');
    t.deepEqual(stderr, []);
  }
});

test('RENDER_BROWSERS: a count, or 0 and unset for one per page in software and one on a GPU', (t) => {
  t.is(loadConfig({ RENDER_BROWSERS: '3' }).render.browsers, 3);
  t.is(loadConfig({ RENDER_BROWSERS: '0' }).render.browsers, undefined);
  t.is(loadConfig({}).render.browsers, undefined);
  t.throws(() => loadConfig({ RENDER_BROWSERS: '65' }), { message: /RENDER_BROWSERS/ });
});

test('LOG_FORMAT=pretty: readable lines, then a banner whose addresses answer', async (t) => {
  const child = spawn(process.execPath, [path.join(ROOT, 'api/main.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', SKINS_PORT: '0', MEDIA_PORT: '0', SEARCH_PORT: '0', RENDER_WORKERS: '0', LOG_FORMAT: 'pretty', DEMO_PLAYER: 'SlimAlex' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => child.kill('SIGKILL'));
  const lines: string[] = [];
  // The banner ends with the line about Ctrl-C (a JSON `ready` line would mean no pretty format).
  for await (const line of readline.createInterface({ input: child.stdout })) {
    lines.push(line);
    if (line.includes('Ctrl-C') || line.includes('"msg":"ready"')) break;
  }
  const text = lines.join('\n');
  t.regex(text, /^\d\d:\d\d:\d\d INFO  skins: starting port=\d+ host=127\.0\.0\.1$/m);
  t.regex(text, /^\d\d:\d\d:\d\d INFO  skins: listening port=\d+ host=127\.0\.0\.1 url=http:\/\/127\.0\.0\.1:\d+$/m);
  t.true(text.indexOf('skins: starting') < text.indexOf('skins: listening'));
  t.false(lines.some((line) => line.startsWith('{')), 'no JSON lines');
  const pages = [...text.matchAll(/http:\/\/127\.0\.0\.1:\d+\/(?:docs|status|health)\b/g)].map((m) => m[0]);
  t.is(pages.length, 4, text);
  for (const url of pages) t.is((await call(url)).status, 200, url);
  t.regex(text, /try +http:\/\/127\.0\.0\.1:\d+\/v1\/render\/SlimAlex\/256/);
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  t.is(code, 0);
});

test('the JSON listening line carries the address a client uses', async (t) => {
  const app = await startApp({ SERVICES: 'search,skins' });
  t.teardown(() => app.stop());
  for (const line of app.logs.filter((l) => l.msg === 'listening')) {
    t.is(line.url, `http://127.0.0.1:${line.port}`);
    t.is((await call(`${line.url}/health`)).status, 200);
  }
  t.is(app.logs.filter((l) => l.msg === 'listening').length, 2);
});

withRedis('until it serves, a port says what it waits for; `listening` comes when its address answers', async (t) => {
  const redisPort = await freePort();
  const entries: Entry[] = [];
  const answers: Array<Promise<number>> = [];
  let child: ChildProcess | undefined;
  t.teardown(() => child?.kill('SIGKILL'));
  const start = startApp({ SERVICES: 'skins,search', REDIS_URL: `redis://127.0.0.1:${redisPort}`, REDIS_START_TIMEOUT_MS: '60000' }, {
    onLog: (entry, process) => {
      child = process;
      entries.push(entry);
      // Asked the moment the line is read: the address must answer by then.
      if (entry.msg === 'listening') answers.push(call(`${entry.url}/health`).then((r) => r.status));
    },
  });
  start.catch(() => {});
  // Redis starts only after the test has seen both ports wait and heard them answer 503, so the
  // order below is the service's, whatever the machine's speed.
  await until('both ports starting, and the wait for Redis', async () => entries, (seen) => seen.filter((e) => e.msg === 'starting').length === 2 && seen.some(waitingForRedis));
  for (const line of entries.filter((e) => e.msg === 'starting')) {
    t.regex(String(line.waiting_for), new RegExp(`^Redis at redis://127\\.0\\.0\\.1:${redisPort} \\(REDIS_URL\\)$`));
    const early = await call(`http://127.0.0.1:${line.port}/health`, undefined, { undocumented: 'the 503 of a port whose service is still starting' });
    t.is(early.status, 503);
  }
  t.false(entries.some((e) => e.msg === 'listening'), 'no listening line before the service answers');
  const redis = await startRedis.onPort(redisPort);
  t.teardown(() => redis.stop());
  const app = await start;
  t.teardown(() => app.stop());
  t.deepEqual(await Promise.all(answers), [200, 200]);
  const at = (match: (e: Entry) => boolean) => entries.findIndex(match);
  for (const service of ['skins', 'search']) {
    const starting = at((e) => e.msg === 'starting' && e.service === service);
    const listening = at((e) => e.msg === 'listening' && e.service === service);
    t.true(starting < at(waitingForRedis) && at(waitingForRedis) < at((e) => e.msg === 'redis ready'), service);
    t.true(at((e) => e.msg === 'redis ready') < listening && listening < at((e) => e.msg === 'ready'), service);
  }
});

test('REDIS_URL where nothing listens: it says at once that it waits and why, then gives up in one line naming REDIS_URL', async (t) => {
  const nothing = `redis://127.0.0.1:${await freePort()}`;
  const { code, entries, stderr } = await runToEnd({ SERVICES: 'skins', REDIS_URL: nothing, REDIS_START_TIMEOUT_MS: '1500' });
  t.is(code, 1);
  const waiting = entries.findIndex(waitingForRedis);
  const failed = entries.findIndex((e) => e.msg === 'start-up failed');
  t.true(waiting >= 0 && waiting < failed, JSON.stringify(entries));
  t.regex(String(entries[waiting].msg), new RegExp(`^waiting for Redis at ${nothing} \\(REDIS_URL\\): connection refused; giving up in \\d+ s$`));
  // The refusal is told once, by the waiting line, not first as a bare client error.
  t.false(entries.slice(0, waiting).some((e) => /redis/i.test(String(e.msg))));
  t.regex(String(entries[failed].reason), new RegExp(`^REDIS_URL \\(${nothing}\\) did not answer within 1500 ms`));
  t.notRegex(JSON.stringify(entries[failed]), /stack|\\n/, 'one line, no stack');
  t.deepEqual(stderr, []);
});

test('the skins port names the render farm it waits for, with its pages', async (t) => {
  // Stopped as soon as it says so: the farm need not start here.
  const { code, entries } = await runToEnd({ SERVICES: 'skins', RENDER_WORKERS: '2' }, (entry, child) => {
    if (entry.msg === 'starting' || entry.msg === 'ready') child.kill('SIGTERM');
  });
  t.is(code, 0);
  t.is(entries.find((e) => e.msg === 'starting')?.waiting_for, 'the render farm (2 pages)');
});
