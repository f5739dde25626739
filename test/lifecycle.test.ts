// No browser outlives the service, whatever ends it: SIGKILL of the API process, SIGTERM while
// browsers launch or pages warm up, a start that fails on a taken port. Processes are found in
// /proc: the service's descendants (browser, zygotes, GPU, network and renderer processes), and
// every process carrying this test's marker in its environment (the browser main process keeps
// the environment it was started with, so it is found even after it was orphaned).
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { resolveChromium } from '../renderer/browser.ts';
import { drawSkin } from '../scripts/fake-upstream/skin-art.ts';
import { descendants, processes, readProc, stillRunning, type Proc } from './helpers/processes.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';
import { startSkins } from './helpers/skins.ts';

/** Processes whose environment carries the marker, wherever they are in the tree now. */
function marked(mark: string): Proc[] {
  return processes().filter((p) => {
    try {
      return readFileSync(`/proc/${p.pid}/environ`, 'utf8').split('\0').includes(`SKINFARM_TEST_MARK=${mark}`);
    } catch {
      return false;
    }
  });
}

/** Waits (bounded, polling) until none of `seen` runs; answers those still running then. */
async function survivors(seen: Iterable<Proc>, withinMs = 10_000): Promise<Proc[]> {
  const until = Date.now() + withinMs;
  let left = [...seen].filter(stillRunning);
  while (left.length > 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = left.filter(stillRunning);
  }
  return left;
}

/** Every descendant of `root` seen while it runs (browsers appear and go during a start). */
function watchTree(root: number): Map<string, Proc> {
  const seen = new Map<string, Proc>();
  const look = () => {
    for (const p of descendants(root)) seen.set(`${p.pid}:${p.start}`, p);
    if (readProc(root)?.state === 'Z' || !readProc(root)) clearInterval(timer);
  };
  const timer = setInterval(look, 25);
  look();
  return seen;
}

/** Fails with what survived, and kills it so that a failure leaves nothing behind either. */
async function assertNoneLeft(t: ExecutionContext, seen: Iterable<Proc>, mark: string) {
  const left = await survivors([...seen, ...marked(mark)]);
  for (const p of left) {
    try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone meanwhile */ }
  }
  t.deepEqual(left.map((p) => `${p.pid} ${p.cmd.slice(0, 100)}`), [], 'processes of the service still running');
}

const isBrowser = (p: Proc) => /chrom/i.test(p.cmd) && !p.cmd.includes('--type=');
/** A browser's tree has been seen once one of its zygotes has. */
const zygote = (seen: Proc[]) => seen.some((p) => p.cmd.includes('--type=zygote'));

/**
 * A Chromium that waits for a gate file before it starts (after the first `free` launches), so
 * a test can act while a browser is launching. `launched()` tells that a gated launch waits;
 * `open()` lets it go on.
 */
async function gatedChromium(t: ExecutionContext, free = 0): Promise<{ executable: string; launched: () => boolean; open: () => void; runs: () => number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skinfarm-gated-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const real = (await resolveChromium(null)).executablePath;
  const executable = path.join(dir, 'chromium');
  // mkdir is atomic: of launches made at once, exactly `free` pass without waiting.
  writeFileSync(executable, `#!/bin/sh
echo >> "${dir}/runs"
for i in $(seq 1 ${free}); do if mkdir "${dir}/free$i" 2>/dev/null; then exec "${real}" "$@"; fi; done
touch "${dir}/launched"
while [ ! -e "${dir}/gate" ]; do sleep 0.05; done
exec "${real}" "$@"
`);
  chmodSync(executable, 0o755);
  return {
    executable,
    launched: () => existsSync(path.join(dir, 'launched')),
    open: () => writeFileSync(path.join(dir, 'gate'), ''),
    runs: () => readFileSync(path.join(dir, 'runs'), 'utf8').length,
  };
}

async function until(condition: () => boolean, what: string, withinMs = 30_000): Promise<void> {
  const end = Date.now() + withinMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`${what} did not happen`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The exit code from the error startApp rejects with when the process ends before `ready`. */
function exitCode(error: Error | undefined): number | null {
  const match = /exited with (\S+) before/.exec(error?.message ?? '');
  return match ? Number(match[1]) : null;
}

test('SIGKILL of the API process takes every browser process with it', async (t) => {
  const mark = randomUUID();
  const app = await startApp({ SERVICES: 'skins', RENDER_WORKERS: '2', RENDER_BROWSERS: '2', SKINFARM_TEST_MARK: mark });
  t.teardown(() => app.stop());
  const rendered = await call(`${app.urls.skins}/v1/render/256`, { method: 'POST', body: await uploadForm() });
  t.is(rendered.status, 200);
  const tree = descendants(app.process.pid!);
  t.is(tree.filter(isBrowser).length, 2, tree.map((p) => p.cmd.slice(0, 80)).join('\n'));
  t.true(tree.some((p) => p.cmd.includes('--type=renderer')), 'the pages are in the tree');
  t.true(tree.some((p) => p.cmd.includes('--type=gpu-process')), 'the GPU processes are in the tree');

  app.process.kill('SIGKILL');
  await assertNoneLeft(t, tree, mark);
  // A killed service cannot delete its browsers' profile folders.
  for (const p of tree.filter(isBrowser)) rmSync(/--user-data-dir=(\S+)/.exec(p.cmd)![1], { recursive: true, force: true });
});

/**
 * Starts the service, watching its process tree from its first log line, and sends SIGTERM once
 * `when` holds after the log line `after`. Answers the exit code (of the stop after `ready`,
 * should the start win), the log and every descendant seen.
 */
async function stopDuringStart(env: Record<string, string>, after: string, when: (seen: Proc[]) => boolean) {
  let seen: Map<string, Proc> | null = null;
  const start = startApp(env, {
    onLog: (entry, child) => {
      seen ??= watchTree(child.pid!);
      if (entry.msg === after) void until(() => when([...seen!.values()]), `a state after "${after}"`).then(() => child.kill('SIGTERM'));
    },
  });
  const { code, log } = await start.then(
    async (app) => ({ code: await app.stop(), log: app.rawLog.join('\n') }),
    (error: Error) => ({ code: exitCode(error), log: error.message }),
  );
  return { code, log, seen: [...seen!.values()] };
}

test('SIGTERM while a browser is launching stops the start and leaves nothing', async (t) => {
  const mark = randomUUID();
  const chromium = await gatedChromium(t);
  const launching = (seen: Proc[]) => seen.some((p) => p.cmd.includes(chromium.executable));
  const { code, log, seen } = await stopDuringStart({ SERVICES: 'skins', RENDER_WORKERS: '2', CHROMIUM_PATH: chromium.executable, SKINFARM_TEST_MARK: mark }, 'starting', launching);
  t.is(code, 0, log);
  t.regex(log, /stopped during start-up/);
  await assertNoneLeft(t, seen, mark);
});

test('SIGTERM with one browser up and another launching leaves no browser', async (t) => {
  const mark = randomUUID();
  const chromium = await gatedChromium(t, 1);
  // Once the free browser is up (and its tree seen) the gated one is still launching.
  const { code, log, seen } = await stopDuringStart({ SERVICES: 'skins', RENDER_WORKERS: '2', RENDER_BROWSERS: '2', CHROMIUM_PATH: chromium.executable, SKINFARM_TEST_MARK: mark }, 'chromium started', (tree) => chromium.launched() && zygote(tree));
  t.is(code, 0, log);
  t.regex(log, /stopped during start-up/);
  await assertNoneLeft(t, seen, mark);
});

test('SIGTERM while the render pages warm up leaves no browser', async (t) => {
  const mark = randomUUID();
  // One browser, two pages: from its start on, only the pages are left to warm up, which takes
  // far longer than a signal; should the farm still win, the stop after ready is checked alike.
  const { code, log, seen } = await stopDuringStart({ SERVICES: 'skins', RENDER_WORKERS: '2', RENDER_BROWSERS: '1', SKINFARM_TEST_MARK: mark }, 'chromium started', zygote);
  t.is(code, 0, log);
  await assertNoneLeft(t, seen, mark);
});

test('SIGTERM under load: renders in flight finish, then no browser is left', async (t) => {
  const mark = randomUUID();
  const h = await startSkins({ RENDER_WORKERS: '2', UPSTREAM_TIMEOUT_MS: '10000', SKINFARM_TEST_MARK: mark });
  t.teardown(() => h.stop());
  const tree = descendants(h.app.process.pid!);
  // Every upstream answer takes 300 ms, so the burst is in flight when SIGTERM arrives.
  h.fake.control({ latencyMs: 300 });
  const names = Array.from({ length: 16 }, (_, i) => `gen_${9100 + i}`);
  const burst = names.map((name) => h.get(`/v1/render/${name}/64?yaw=${names.indexOf(name)}`));
  const sent = () => h.fake.requests().map((r) => `${r.path} ${r.body ?? ''}`).join('\n');
  await until(() => names.every((name) => sent().includes(name)), 'the burst reaching the upstream');
  h.app.process.kill('SIGTERM');
  const results = await Promise.all(burst);
  t.deepEqual(results.map((r) => `${r.status} ${r.headers.get('content-type')}`), results.map(() => '200 image/png'));
  t.is(await h.app.stop(), 0);
  await assertNoneLeft(t, tree, mark);
});

test('SIGTERM while a crashed browser is started again leaves no browser', async (t) => {
  const mark = randomUUID();
  const chromium = await gatedChromium(t, 2);
  const app = await startApp({ SERVICES: 'skins', RENDER_WORKERS: '2', RENDER_BROWSERS: '2', CHROMIUM_PATH: chromium.executable, SKINFARM_TEST_MARK: mark });
  t.teardown(() => app.stop());
  const seen = watchTree(app.process.pid!);
  const [crashed] = descendants(app.process.pid!).filter(isBrowser);
  process.kill(crashed.pid, 'SIGKILL');
  // The farm notices and starts a new browser, which waits at the gate: a relaunch under way.
  await until(chromium.launched, 'the relaunch');
  t.is(await app.stop(), 0);
  t.true(app.logs.some((entry) => entry.msg === 'chromium died; starting a new one'));
  t.is(chromium.runs(), 3, 'the stop ended the relaunch: no further tries');
  t.false(app.logs.some((entry) => entry.level === 'error'), 'a stop during a relaunch is no error');
  await assertNoneLeft(t, seen.values(), mark);
});

test('a taken port stops the start before any browser starts', async (t) => {
  const mark = randomUUID();
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => taken.close());
  const port = (taken.address() as net.AddressInfo).port;
  let seen = new Map<string, Proc>();
  const error = await t.throwsAsync(startApp({ SERVICES: 'skins,media', MEDIA_PORT: String(port), RENDER_WORKERS: '2', SKINFARM_TEST_MARK: mark }, {
    onLog: (entry, child) => {
      if (entry.msg === 'starting' && seen.size === 0) seen = watchTree(child.pid!);
    },
  }));
  t.is(exitCode(error), 1, error?.message);
  t.regex(error!.message, /EADDRINUSE/);
  t.notRegex(error!.message, /chromium started/);
  await assertNoneLeft(t, seen.values(), mark);
});

test('while the render farm starts, the port answers 503 with Retry-After', async (t) => {
  const chromium = await gatedChromium(t);
  let early: ReturnType<typeof call> | null = null;
  const start = startApp({ SERVICES: 'skins', RENDER_WORKERS: '1', CHROMIUM_PATH: chromium.executable }, {
    onLog: (entry) => {
      if (entry.msg === 'starting') early = until(chromium.launched, 'the launch').then(() => call(`http://127.0.0.1:${entry.port}/v1/status`));
    },
  });
  await until(() => early !== null, 'starting');
  const waiting = await early!;
  t.is(waiting.status, 503);
  t.is(waiting.headers.get('retry-after'), '1');
  t.is(waiting.json.code, 'overloaded');
  t.is(waiting.json.success, false);
  chromium.open();
  const app: RunningApp = await start;
  t.teardown(() => app.stop());
  t.is((await call(`${app.urls.skins}/v1/status`)).status, 200);
});

async function uploadForm(): Promise<FormData> {
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(await drawSkin())]), 'skin.png');
  return form;
}
