// The render farm as a user runs it: `npm start` with the default settings (two pages sharing one
// browser on two cores, the default job timeout and idle trim), no setting tuned for the test.
// Every kind of image keeps coming after the service idled past its idle trim, after its GPU
// process, its renderers and its browser were killed, and after the next idle trim (issue #38: after 15 idle seconds every render
// was a 500, for good, while /ready said ok). Then a farm that cannot draw (its GPU process paused,
// no browser able to start again) says so on /ready, /status and /v1/status, refuses renders at
// once, and heals by itself once a browser can start again.
// Real npm, service, Chromium and fake upstream.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import sharp from 'sharp';
import { resolveChromium } from '../renderer/browser.ts';
import { launch, ON_FREE_PORTS, type RunningService } from '../scripts/launch.ts';
import { startFakeUpstream } from '../scripts/fake-upstream/server.ts';
import { drawSkin } from '../scripts/fake-upstream/skin-art.ts';
import { invisibleVariant } from './helpers/png.ts';
import { descendants } from './helpers/processes.ts';
import { call } from './helpers/service.ts';

type LogEntry = Record<string, unknown>;

/** `npm start` with the defaults, on free loopback ports, pointed at a fake upstream; `env` adds settings. */
async function npmStart(t: ExecutionContext, env: Record<string, string> = {}): Promise<{ app: RunningService; base: string }> {
  const fake = await startFakeUpstream();
  const app = await launch({ ...ON_FREE_PORTS, SERVICES: 'skins', ...fake.env, ...env }, { npmStart: true, timeoutMs: 120_000 }).catch(async (error) => {
    await fake.close();
    throw error;
  });
  t.teardown(async () => {
    await app.stop();
    await fake.close();
  });
  return { app, base: app.urls.skins };
}

/** The service's Chromium processes of one type (gpu-process, renderer). */
const chromium = (app: RunningService, type: string) => descendants(app.process.pid!).filter((p) => p.cmd.includes(`--type=${type}`)).map((p) => p.pid);

/** A picture with something drawn in it: an image answer, not an error saved as one. */
async function drawn(bytes: Buffer): Promise<boolean> {
  const { data } = await sharp(bytes, { animated: true }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  for (let i = 3; i < data.length; i += 4) if (data[i] === 255) return true;
  return false;
}

/** Every image the farm draws, at angles not asked before (`round`), so none is a cache hit. */
async function everyImage(t: ExecutionContext, base: string, round: number): Promise<void> {
  const yaw = 10 + round * 7;
  const paths = [`/v1/render/Knight/96?yaw=${yaw}`, `/v1/body/Ranger/96?yaw=${yaw}`, `/v1/cube/Robot/64?yaw=${yaw}`, `/v1/head/Knight/64?yaw=${yaw}`,
    `/v1/turntable/Ranger/48?frames=8&pitch=${round}`, `/v1/render/Knight/96.webp?yaw=${yaw}`];
  for (const p of paths) {
    const r = await call(`${base}${p}`);
    t.is(r.status, 200, `${p} after round ${round}: ${r.text.slice(0, 200)}`);
    if (r.status === 200) t.true(await drawn(r.bytes), `${p} is a drawn image`);
  }
}

/** The log entries after `since` (ms since the epoch). */
const after = (since: number) => (entry: LogEntry) => Date.parse(String(entry.time)) > since;

test('npm start, defaults: left alone, the service trims once its start has settled, then draws every image', async (t) => {
  const { app, base } = await npmStart(t);
  // No request before it: the start's own garbage goes without waiting for the idle period.
  const trimmed = await app.waitForLog((e) => e.msg === 'idle: memory trimmed', 120_000);
  t.is(trimmed.after, 'started', JSON.stringify(trimmed));
  // The second page parked: one renderer process left (polled: a closed page's process exits on its own time).
  const renderers = async (count: number) => {
    const deadline = Date.now() + 60_000;
    while (chromium(app, 'renderer').length !== count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    return chromium(app, 'renderer').length;
  };
  t.is(await renderers(1), 1, 'one page open while idle');
  await everyImage(t, base, 0);
  t.is(await renderers(2), 2, 'both pages open once work came');
  const r = await call(`${base}/ready`);
  t.is(r.status, 200, r.text);
});

test('npm start, defaults: every image comes back after an idle trim, a killed GPU process, renderer and browser, and the next idle trim, and /ready says ok throughout', async (t) => {
  const { app, base } = await npmStart(t);
  const skin = await drawSkin({ seed: 380 });
  const upload = async (n: number) => {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(await invisibleVariant(skin, n))], { type: 'image/png' }), 'skin.png');
    form.set('yaw', '30');
    const r = await call(`${base}/v1/render/80`, { method: 'POST', body: form });
    t.is(r.status, 200, r.text.slice(0, 200));
    return r.bytes;
  };
  const ready = async (moment: string) => {
    const r = await call(`${base}/ready`);
    t.is(r.status, 200, `${moment}: ${r.text}`);
    t.like(r.json?.checks?.find((c: { name: string }) => c.name === 'render_farm'), { status: 'ok' }, moment);
  };
  await everyImage(t, base, 0);
  const expected = await upload(0);
  // The first trim after the requests above (waiting for the event, however long the machine takes).
  const idle = () => {
    const since = Date.now();
    return app.waitForLog((e) => e.msg === 'idle: memory trimmed' && after(since)(e), 120_000);
  };
  await idle();
  await everyImage(t, base, 1);
  t.true((await upload(1)).equals(expected), 'the same picture after the idle trim');
  await ready('after the idle trim');

  const gpus = chromium(app, 'gpu-process');
  t.is(gpus.length, 1, 'one browser, one GPU process');
  const browsers = () => descendants(app.process.pid!).filter((p) => /chrom/i.test(p.cmd) && !p.cmd.includes('--type=')).map((p) => p.pid);
  t.is(browsers().length, 1, 'one browser');
  // Each fault's processes as they are when it strikes (the one before replaced pages).
  const faults: Array<[string, () => number[]]> = [['the GPU process', () => gpus], ['the renderers', () => chromium(app, 'renderer')], ['the browser', browsers]];
  for (const [round, [what, pids]] of faults.entries()) {
    for (const pid of pids()) process.kill(pid, 'SIGKILL');
    await everyImage(t, base, 2 + round);
    t.true((await upload(2 + round)).equals(expected), `the same picture after ${what} was killed`);
    await ready(`after ${what} was killed`);
  }

  await idle();
  await everyImage(t, base, 5);
  t.true((await upload(5)).equals(expected), 'the same picture after the next idle trim');
  await ready('after the next idle trim');
  const stuck = app.logs.filter((e) => e.component === 'renderer' && /timed out|aborted|Terminating/.test(String(e.err)));
  t.deepEqual(stuck, [], 'no render waited for a job timeout');
});

test('a farm that cannot draw says so and heals: paused GPU process, then no browser can start; /ready 503, renders refused at once; back once a browser starts', async (t) => {
  // A Chromium that fails to start while the file `broken` exists, as a browser removed or broken by an upgrade would.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skinfarm-breakable-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const real = (await resolveChromium(null)).executablePath;
  const executable = path.join(dir, 'chromium');
  writeFileSync(executable, `#!/bin/sh\nif [ -e "${dir}/broken" ]; then echo "chromium: broken" >&2; exit 1; fi\nexec "${real}" "$@"\n`);
  chmodSync(executable, 0o755);
  const { app, base } = await npmStart(t, { CHROMIUM_PATH: executable });
  const render = (yaw: number) => call(`${base}/v1/render/Knight/64?yaw=${yaw}`);
  t.is((await render(1)).status, 200);

  writeFileSync(path.join(dir, 'broken'), '');
  for (const pid of chromium(app, 'gpu-process')) process.kill(pid, 'SIGSTOP');
  // Pages drawing on a paused GPU process hang: the first job times out (its page is replaced),
  // the second too, and the watchdog replaces the browser, which cannot start.
  for (const yaw of [2, 3]) t.is((await render(yaw)).status, 500);
  await app.waitForLog((e) => e.msg === 'render batches keep timing out; restarting chromium', 30_000);
  await app.waitForLog((e) => e.msg === 'chromium restart failed', 60_000);

  const notReady = await call(`${base}/ready`);
  t.is(notReady.status, 503);
  t.regex(notReady.text, /render_farm: .*chromium could not be started/);
  const status = await call(`${base}/v1/status`);
  t.like(status.json.data.render, { state: 'down', watchdog_restarts: 1 });
  t.regex((await call(`${base}/status`)).text, /cannot draw/);
  const refused = await render(4);
  t.is(refused.status, 503, 'refused at once: no browser runs');
  t.is(refused.json.code, 'overloaded');
  t.truthy(refused.headers.get('retry-after'));

  rmSync(path.join(dir, 'broken'));
  // Nobody renders meanwhile (a balancer sends an unready instance nothing): the farm starts a
  // browser and draws a known job by itself.
  await app.waitForLog((e) => e.msg === 'the render farm draws again', 60_000);
  t.is((await call(`${base}/ready`)).status, 200);
  t.like((await call(`${base}/v1/status`)).json.data.render, { state: 'ok', failed_in_a_row: 0 });
  t.is((await render(5)).status, 200);
});
