// Faults under the service: the fake upstream runs as a process of its own, then is paused
// (SIGSTOP: connections are accepted and never answered) or killed (connections refused). A stale
// player is answered from its stale copy without waiting for the upstream, repeated timeouts or
// failed connections open the source's circuit (lookups then fail at once, with no call), it
// half-opens and closes once the upstream is back, and the stale answers are logged as one state
// line plus counts.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import readline from 'node:readline';
import test, { type ExecutionContext } from 'ava';
import { ROOT, call, startApp, type RunningApp } from './helpers/service.ts';

interface FakeProcess { child: ChildProcess; env: Record<string, string>; port: number }

/** `node scripts/fake-upstream/main.ts`: ready once it has printed its environment lines. */
async function startFakeProcess(port = 0): Promise<FakeProcess> {
  const child = spawn(process.execPath, [path.join(ROOT, 'scripts/fake-upstream/main.ts'), '--port', String(port)], { stdio: ['ignore', 'pipe', 'ignore'] });
  const env: Record<string, string> = {};
  const exited = once(child, 'exit').then(([code]) => { throw new Error(`the fake upstream exited with ${code}`); });
  const printed = new Promise<void>((resolve) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const at = line.indexOf('=');
      env[line.slice(0, at)] = line.slice(at + 1);
      // TEXTURE_HOSTS is the last line main.ts prints.
      if (line.startsWith('TEXTURE_HOSTS=')) resolve();
    });
  });
  await Promise.race([printed, exited]);
  return { child, env, port: Number(new URL(env.OFFICIAL_API_URL).port) };
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exit = once(child, 'exit');
  child.kill('SIGKILL');
  await exit;
}

const TIMEOUT_MS = 10_000;
const OPEN_MS = 8000;

async function startService(t: ExecutionContext, fake: FakeProcess): Promise<RunningApp> {
  const app = await startApp({
    SERVICES: 'skins', ...fake.env,
    // Profiles are stale as soon as stored; names stay fresh, so a player lookup asks for its profile only.
    CACHE_TTL_PROFILE: '0',
    UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS),
    UPSTREAM_CIRCUIT_OPEN_MS: String(OPEN_MS),
    // One call per name (no merged bulk calls), and the official source alone.
    NAME_BATCH_WINDOW_MS: '0', EXTERNAL_ENABLED: 'false', OFFICIAL_NAMES_BUDGET: 'off', OFFICIAL_PROFILES_BUDGET: 'off',
  });
  t.teardown(() => app.stop());
  return app;
}

const official = async (app: RunningApp) => (await call(`${app.urls.skins}/v1/status`)).json.data.sources.official;

/** Calls the official client refused without sending (circuit open or budget spent). */
async function refused(app: RunningApp): Promise<number> {
  const text = await (await fetch(`${app.urls.skins}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('skinfarm_upstream_calls_total{') && l.includes('source="official"') && l.includes('outcome="refused"'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** Polls the status until the circuit has left `open` (it half-opens after OPEN_MS). */
async function untilHalfOpen(app: RunningApp): Promise<string> {
  const deadline = Date.now() + OPEN_MS + 30_000;
  let state = 'open';
  while (state === 'open' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    state = (await official(app)).circuit.state;
  }
  return state;
}

/** Timed GET: the answer and how long it took. */
async function timed(url: string) {
  const started = performance.now();
  const answer = await call(url);
  return { ...answer, ms: performance.now() - started };
}

const STALE_LOG = 'serving stale entries: the upstream failed or is slow';

/** Every stale answer is in the log: one for a first line, `count` for a count line. */
async function staleLogAccountsFor(app: RunningApp, answers: number) {
  const lines = () => app.logs.filter((l) => l.msg === STALE_LOG);
  const accounted = () => lines().reduce((n, l) => n + (typeof l.count === 'number' ? l.count : 1), 0);
  // Counts are written once per interval (10 s): wait for the one that covers the last answer.
  await app.waitForLog(() => accounted() >= answers, 30_000).catch(() => undefined);
  return { accounted: accounted(), firstLines: lines().filter((l) => l.count === undefined).length, lines: lines().length };
}

test('upstream paused (SIGSTOP): stale at once, the circuit opens on timeouts, fails fast, and closes after SIGCONT', async (t) => {
  const fake = await startFakeProcess();
  t.teardown(() => kill(fake.child));
  const app = await startService(t, fake);
  const base = app.urls.skins;
  t.is((await call(`${base}/v1/player/ClassicSteve`)).status, 200);
  const before = await official(app);

  fake.child.kill('SIGSTOP');
  const stale = await timed(`${base}/v1/player/ClassicSteve`);
  t.is(stale.status, 200);
  t.is(stale.headers.get('x-cache'), 'STALE');
  t.true(stale.ms < TIMEOUT_MS / 2, `the stale copy took ${Math.round(stale.ms)} ms`);
  const pending = await official(app);
  t.is(pending.calls, before.calls, 'answered while the refresh is still pending (no outcome recorded yet)');
  t.is(pending.last_error, null);
  const burst = await Promise.all(Array.from({ length: 20 }, () => call(`${base}/v1/player/ClassicSteve`)));
  t.deepEqual(burst.map((r) => r.headers.get('x-cache')), burst.map(() => 'STALE'));
  const staleAnswers = 1 + burst.length;

  // Five names nobody has looked up: five calls that time out (beside the profile refresh).
  const timeouts = await Promise.all([1, 2, 3, 4, 5].map((i) => call(`${base}/v1/uuid/gen_${i}?source=official`)));
  t.deepEqual(timeouts.map((r) => r.json.code), timeouts.map(() => 'upstream_timeout'));
  const open = await official(app);
  t.is(open.circuit.state, 'open');
  t.is(open.circuit.reason, 'upstream_timeout');
  t.false(open.ok);
  t.true(open.circuit.retry_in_s > 0);

  const refusedBefore = await refused(app);
  const fast = await timed(`${base}/v1/uuid/gen_6?source=official`);
  t.is(fast.status, 504);
  t.is(fast.json.code, 'upstream_timeout');
  t.true(Number(fast.headers.get('retry-after')) >= 1);
  t.true(fast.ms < TIMEOUT_MS / 2, `failed fast: ${Math.round(fast.ms)} ms`);
  t.log(`upstream stopped, UPSTREAM_TIMEOUT_MS=${TIMEOUT_MS}: stale copy in ${Math.round(stale.ms)} ms, refused lookup in ${Math.round(fast.ms)} ms`);
  t.is(await refused(app), refusedBefore + 1, 'refused without a call');
  t.is((await official(app)).calls, open.calls, 'no call was sent');

  fake.child.kill('SIGCONT');
  t.is(await untilHalfOpen(app), 'half_open');
  const probe = await call(`${base}/v1/uuid/gen_7?source=official`);
  t.is(probe.status, 200, 'the probe reaches the upstream again');
  const closed = await official(app);
  t.is(closed.circuit.state, 'closed');
  t.true(closed.ok);

  t.is(app.logs.filter((l) => l.msg === 'upstream circuit open: calls fail at once until it is probed again').length, 1, 'the opening is logged once');
  t.is(app.logs.filter((l) => l.msg === 'upstream circuit closed: the upstream answers again').length, 1);
  const log = await staleLogAccountsFor(app, staleAnswers);
  t.is(log.firstLines, 1, 'one state line');
  t.is(log.accounted, staleAnswers, 'and counts for the rest');
  t.true(log.lines <= 3, `${log.lines} lines for ${staleAnswers} stale answers`);
});

test('upstream killed (connection refused): the circuit opens on errors, fails fast, and closes when it is back', async (t) => {
  let fake = await startFakeProcess();
  t.teardown(() => kill(fake.child));
  const app = await startService(t, fake);
  const base = app.urls.skins;
  t.is((await call(`${base}/v1/player/ClassicSteve`)).status, 200);

  await kill(fake.child);
  const stale = await Promise.all(Array.from({ length: 20 }, () => call(`${base}/v1/player/ClassicSteve`)));
  t.deepEqual(stale.map((r) => r.headers.get('x-cache')), stale.map(() => 'STALE'));
  let staleAnswers = stale.length;

  // Each lookup of a new name fails on both official hosts; a few in a row open the circuit.
  let state = (await official(app)).circuit.state;
  for (let i = 1; i <= 10 && state !== 'open'; i += 1) {
    const failed = await call(`${base}/v1/uuid/gen_${i}?source=official`);
    t.is(failed.json.code, 'upstream_error');
    state = (await official(app)).circuit.state;
  }
  const open = await official(app);
  t.is(open.circuit.state, 'open');
  t.is(open.circuit.reason, 'upstream_error');
  t.false(open.ok);

  const refusedBefore = await refused(app);
  const fast = await call(`${base}/v1/uuid/gen_20?source=official`);
  t.is(fast.status, 502);
  t.is(fast.json.code, 'upstream_error');
  t.true(Number(fast.headers.get('retry-after')) >= 1);
  t.is(await refused(app), refusedBefore + 1, 'refused without a call (and without trying the legacy host)');
  const cached = await call(`${base}/v1/player/ClassicSteve`);
  t.is(cached.headers.get('x-cache'), 'STALE', 'the stale copy still answers');
  staleAnswers += 1;
  t.is((await official(app)).calls, open.calls, 'no call was sent');

  fake = await startFakeProcess(fake.port);
  t.is(await untilHalfOpen(app), 'half_open');
  const probe = await call(`${base}/v1/uuid/gen_21?source=official`);
  t.is(probe.status, 200);
  const closed = await official(app);
  t.is(closed.circuit.state, 'closed');
  t.true(closed.ok);

  const log = await staleLogAccountsFor(app, staleAnswers);
  t.is(log.firstLines, 1, 'one state line');
  t.is(log.accounted, staleAnswers, 'and counts for the rest');
});
