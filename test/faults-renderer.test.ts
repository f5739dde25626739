// Chromium's processes killed while the farm draws (what a driver crash, an OOM kill or a bug does):
// the GPU process, the renderers, a browser. Every image answered afterwards is the one answered
// before, byte for byte: a page that drew on a GPU process that ended is never believed (it drew
// blank images, then every render without its ground shadow, answered 200 and cached). Then a
// fresh page that draws its known-answer render wrong, and the whole chain through the service.
// Real Chromium; one farm for the load tests, in order.
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { RenderError } from '../renderer/errors.ts';
import { RenderFarm } from '../renderer/farm.ts';
import type { RenderJob } from '../renderer/jobs.ts';
import { normalizeSkin } from '../renderer/skin-normalize.ts';
import { drawSkin } from '../scripts/fake-upstream/skin-art.ts';
import { createLogger } from '../shared/log.ts';
import { invisibleVariant as variant } from './helpers/png.ts';
import { descendants } from './helpers/processes.ts';
import { startSkins } from './helpers/skins.ts';

let farm: RenderFarm;
/** Eight views with the shadow, and what the farm drew for each before anything was killed. */
let jobs: RenderJob[];
let before: Buffer[];
const warnings: string[] = [];

test.before(async () => {
  farm = await RenderFarm.create({ workers: 2, browsers: 2, gpu: 'off', queueLimit: 1000, jobTimeoutMs: 60_000 },
    createLogger('warn', {}, (line) => warnings.push(line)));
  const skin = await normalizeSkin(await drawSkin({}));
  jobs = Array.from({ length: 8 }, (_, i) => ({ kind: 'render', skin, slim: false, size: 64, yaw: i * 45 - 180, pitch: 20, shadow: true, outer: true, bg: null }));
  before = await Promise.all(jobs.map((job) => farm.render(job)));
});
test.after.always(() => farm?.close());
test.afterEach.always((t) => {
  if (!t.passed) t.log(warnings.join(''));
});

/** The farm's processes of one type (gpu-process, renderer) in every browser. */
const ofType = (type: string) => farm.browserPids().flatMap((pid) => descendants(pid).filter((p) => p.cmd.includes(`--type=${type}`)).map((p) => p.pid));

/**
 * 160 renders of the eight views; once the first is answered (the pages are drawing), `kill`
 * runs. Every answer must be the view's image from before, and so must a render sent after all
 * of them (on the pages that replaced the killed ones).
 */
async function killUnderLoad(t: import('ava').ExecutionContext, kill: () => void): Promise<void> {
  const load = Array.from({ length: 160 }, (_, i) => farm.render(jobs[i % 8]).then((png) => ({ i, png })));
  await Promise.race(load);
  kill();
  const answers = await Promise.allSettled(load);
  const failed = answers.flatMap((a) => (a.status === 'rejected' ? [a.reason] : []));
  t.deepEqual(failed.map((e) => (e instanceof RenderError ? e.kind : String(e))), [], 'no job fails');
  const wrong = answers.flatMap((a) => (a.status === 'fulfilled' && !a.value.png.equals(before[a.value.i % 8]) ? [a.value.i] : []));
  t.deepEqual(wrong, [], 'jobs answered with another image than before');
  t.true((await farm.render(jobs[3])).equals(before[3]), 'the first render after the load');
}

test.serial('GPU processes killed under load: no image drawn on them is answered; the pages are replaced', async (t) => {
  const { contextLosses, browserRestarts } = farm.stats();
  const gpus = ofType('gpu-process');
  t.is(gpus.length, 2, 'one GPU process per browser');
  await killUnderLoad(t, () => gpus.forEach((pid) => process.kill(pid, 'SIGKILL')));
  t.true(farm.stats().contextLosses > contextLosses, 'pages in doubt are counted');
  t.is(farm.stats().browserRestarts, browserRestarts, 'the browsers lived: only the pages were replaced');
  t.true(ofType('gpu-process').every((pid) => !gpus.includes(pid)), 'the browsers run new GPU processes');
  t.true(warnings.some((line) => line.includes('lost its WebGL context')), 'logged');
});

test.serial('a GPU process killed while the farm is idle: the next render is the one from before', async (t) => {
  const { contextLosses } = farm.stats();
  for (const pid of ofType('gpu-process')) process.kill(pid, 'SIGKILL');
  // Each page learns of it on its next batch; both must draw the view as before.
  const [a, b] = await Promise.all([farm.render(jobs[5]), farm.render(jobs[6])]);
  t.true(a.equals(before[5]));
  t.true(b.equals(before[6]));
  t.true(farm.stats().contextLosses > contextLosses);
});

test.serial('renderer processes killed under load: their jobs run again on fresh pages', async (t) => {
  await killUnderLoad(t, () => ofType('renderer').forEach((pid) => process.kill(pid, 'SIGKILL')));
});

test.serial('a browser killed under load: its jobs run again in a new browser', async (t) => {
  const { browserRestarts } = farm.stats();
  const [dead] = farm.browserPids();
  await killUnderLoad(t, () => process.kill(dead, 'SIGKILL'));
  t.is(farm.stats().browserRestarts, browserRestarts + 1);
  t.false(farm.browserPids().includes(dead));
});

test('a GPU process killed again and again: Chromium gives pages no WebGL after the third time, so the browser is replaced; every render is the one from before', async (t) => {
  const one = await RenderFarm.create({ workers: 1, browsers: 1, gpu: 'off', jobTimeoutMs: 60_000 }, createLogger('warn', {}, (line) => warnings.push(line)));
  t.teardown(() => one.close());
  const expected = await one.render(jobs[2]);
  for (let kill = 1; kill <= 5; kill += 1) {
    for (const p of descendants(one.browserPids()[0]).filter((p) => p.cmd.includes('--type=gpu-process'))) process.kill(p.pid, 'SIGKILL');
    t.true((await one.render(jobs[2])).equals(expected), `the render after kill ${kill}`);
  }
  t.like(one.stats(), { failed: 0 });
  t.log(one.stats());
});

test('a fresh page that draws its known answer wrong draws for no one: its browser is replaced and the job runs there', async (t) => {
  // The page extension has the second page a browser opens draw its self-check at another angle.
  const pageExtension = fileURLToPath(new URL('helpers/page-that-draws-wrong.js', import.meta.url));
  const one = await RenderFarm.create({ workers: 1, browsers: 1, gpu: 'off', jobTimeoutMs: 60_000, pageExtension },
    createLogger('warn', {}, (line) => warnings.push(line)));
  t.teardown(() => one.close());
  const expected = await one.render(jobs[1]);
  const [browser] = one.browserPids();
  // The page crashes; the page opened for the next job is the one that draws its self-check wrong.
  for (const p of descendants(browser).filter((p) => p.cmd.includes('--type=renderer'))) process.kill(p.pid, 'SIGKILL');
  t.true((await one.render(jobs[1])).equals(expected));
  t.like(one.stats(), { selfCheckFailures: 1, browserRestarts: 1, failed: 0 });
  t.false(one.browserPids().includes(browser));
});

test('through the service: after its GPU process is killed the next render is still the right image, and /v1/status and /metrics count the page replaced', async (t) => {
  const h = await startSkins({ RENDER_WORKERS: '1' });
  t.teardown(() => h.stop());
  const skin = await drawSkin({ seed: 5 });
  const render = async (n: number) => {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(await variant(skin, n))], { type: 'image/png' }), 'skin.png');
    form.set('yaw', '30');
    form.set('pitch', '25');
    const r = await h.get('/v1/render/64', { method: 'POST', body: form });
    t.is(r.status, 200, r.text.slice(0, 200));
    return { body: r.bytes, etag: r.headers.get('etag') };
  };
  const first = await render(1);
  const second = await render(2);
  t.not(second.etag, first.etag, 'two cache keys');
  t.true(second.body.equals(first.body), 'the same picture');
  for (const p of descendants(h.app.process.pid!).filter((p) => p.cmd.includes('--type=gpu-process'))) process.kill(p.pid, 'SIGKILL');
  t.true((await render(3)).body.equals(first.body), 'drawn by a page the GPU process was not lost under');
  t.true((await h.get('/v1/status')).json.data.render.context_losses >= 1);
  t.regex((await h.get('/metrics')).text, /^skinfarm_render_context_losses [1-9]/m);
  await h.app.waitForLog((entry) => entry.msg === 'a render page lost its WebGL context; its jobs run again on a fresh page');
});
