// A Piscina worker (one thread per page, page-worker.ts): owns one page in one of the farm's Chromium
// instances (connected through the CDP relay thread, relay-transport.ts), loads the three.js scene
// once, then renders batches of jobs through one CDP call each. A page draws for no one until it
// has drawn a known answer, and nothing it draws is answered once its WebGL context was lost or
// the GPU process it draws on ended (docs/renderer.md, "Faults").
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parentPort } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol, workerData } from 'piscina';
import type { Browser, CDPSession, Page } from 'puppeteer-core';
import { collectGarbage } from '../shared/collect-garbage.ts';
import { CAPE_SIZE, capeFaces, ELYTRA_SIZE, elytraFaces, PART_NAMES, partFaces, partSize, POSES } from '../shared/skin-layout.ts';
import { defaultSkin } from './default-skins.ts';
import { IN_DOUBT, SELF_CHECK_FAILED, toWireJob, type BrowserRef, type PageJob, type PageMemory, type PageTexture, type WireJob, type WireTexture, type WorkerTask, type WorkerResult } from './jobs.ts';
import type { PageApi, PageLayout } from './page/api.ts';
import type { OpenedMessage, PageWorkerData } from './page-worker.ts';
import { gpuProcess, gpuStillRunning, type Proc } from './processes.ts';
import { connectBrowser } from './relay-transport.ts';
import { packTexels } from './texel-pack.ts';

const ORIGIN = 'http://skinfarm.render';
const here = path.dirname(fileURLToPath(import.meta.url));
const threeDir = path.dirname(createRequire(import.meta.url).resolve('three'));

/** This worker's page number (the page lives in browser slot % browsers), and the farm's page extension. */
const { slot, pageExtension } = workerData as PageWorkerData;

/** The texture layout and poses the page draws with, from the one definition in shared/skin-layout.ts. */
const LAYOUT: PageLayout = {
  parts: Object.fromEntries(['classic', 'slim'].map((model) => [model, Object.fromEntries(PART_NAMES.map((part) => [part, {
    size: partSize(part, model === 'slim'),
    inner: partFaces(part, 'inner', model === 'slim'),
    outer: partFaces(part, 'outer', model === 'slim'),
  }]))])) as PageLayout['parts'],
  cape: { size: CAPE_SIZE, faces: capeFaces() },
  elytra: { size: ELYTRA_SIZE, faces: elytraFaces() },
  poses: POSES,
};

/**
 * Bytes of texture data a page keeps (the most recently used): 256 skins of 64x64. The page evicts
 * by this and the worker mirrors it; evicted textures of the size a new one needs are refilled in
 * place (scene.js).
 */
const TEXTURE_BYTES = 4 << 20;

// Everything the page loads is served from here: no network, no CDN.
const FILES: Record<string, { type: string; body: string }> = {
  '/index.html': {
    type: 'text/html',
    // The first error while the scene loads is kept (a browser whose GPU process crashed too
    // often gives no WebGL context, and three.js throws): the page says so instead of never
    // becoming ready.
    body: `<!doctype html><meta charset="utf-8"><script>addEventListener('error', (e) => { window.sceneError ??= String(e.message); });</script>`
      + `<script type="importmap">{"imports":{"three":"/three.module.js"}}</script><script type="module" src="/main.js"></script>`,
  },
  '/three.module.js': { type: 'text/javascript', body: readFileSync(path.join(threeDir, 'three.module.js'), 'utf8') },
  '/three.core.js': { type: 'text/javascript', body: readFileSync(path.join(threeDir, 'three.core.js'), 'utf8') },
  ...Object.fromEntries(['main.js', 'scene.js', 'edges.js', 'texels.js'].map((file) => [`/${file}`, { type: 'text/javascript', body: readFileSync(path.join(here, 'page', file), 'utf8') }])),
  '/extension.js': { type: 'text/javascript', body: readFileSync(pageExtension ?? path.join(here, 'page/extension.js'), 'utf8') },
  // What renderer/page/page-settings.d.ts declares.
  '/page-settings.js': { type: 'text/javascript', body: `export const LAYOUT = ${JSON.stringify(LAYOUT)};\nexport const TEXTURE_BYTES = ${TEXTURE_BYTES};` },
};

/**
 * Texture keys the page holds, least recently used first, with their sizes: the same rule as the
 * page's takeIn() (a batch's textures are touched or added in job order, then the oldest beyond
 * TEXTURE_BYTES go, never one of the batch's own).
 */
class PageTextures {
  private readonly keys = new Map<string, number>();
  private bytes = 0;

  /** The batch's jobs as the page gets them: bytes only for textures the page lacks. */
  forBatch(jobs: WireJob[]): PageJob[] {
    const mapped = jobs.map((job) => ({ ...job, skin: this.touch(job.skin), cape: job.cape ? this.touch(job.cape) : null }));
    const own = new Set(jobs.flatMap(texturesOf).map((t) => t.key));
    for (const [key, size] of this.keys) {
      if (this.bytes <= TEXTURE_BYTES) break;
      if (own.has(key)) continue;
      this.keys.delete(key);
      this.bytes -= size;
    }
    return mapped;
  }

  /** Forgets keys the page turned out to lack, so their bytes are sent again. */
  forget(keys: Iterable<string>): void {
    for (const key of keys) {
      this.bytes -= this.keys.get(key) ?? 0;
      this.keys.delete(key);
    }
  }

  private touch(texture: WireTexture): PageTexture {
    const known = this.keys.delete(texture.key);
    if (!known) this.bytes += texture.data.byteLength;
    this.keys.set(texture.key, texture.data.byteLength);
    return { key: texture.key, width: texture.width, height: texture.height, texels: known ? null : packTexels(texture.data) };
  }
}

const texturesOf = (job: WireJob): WireTexture[] => (job.cape ? [job.skin, job.cape] : [job.skin]);

/**
 * The jobs in runs, each drawn in one call, whose textures together fit TEXTURE_BYTES: the page
 * keeps every texture of the run it draws, so one client's HD skin and cape (4 + 2 MiB) can no
 * longer push the textures of the jobs beside it out of the page (they failed "not in the page",
 * and so did their retry: issue #38). A job over the bound alone is drawn alone, its textures
 * kept until the next run.
 */
export function fittingRuns(jobs: WireJob[]): WireJob[][] {
  const runs: WireJob[][] = [];
  let run: WireJob[] = [];
  let keys = new Set<string>();
  let bytes = 0;
  for (const job of jobs) {
    const added = () => texturesOf(job).filter((t) => !keys.has(t.key));
    if (run.length > 0 && bytes + added().reduce((n, t) => n + t.data.byteLength, 0) > TEXTURE_BYTES) {
      runs.push(run);
      run = [];
      keys = new Set();
      bytes = 0;
    }
    for (const t of added()) {
      keys.add(t.key);
      bytes += t.data.byteLength;
    }
    run.push(job);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/** The page's error for a texture it does not hold. */
const MISSING = /^texture \S+ is not in the page$/;
/** The page's error once its WebGL context was lost (scene.js): it never draws again. */
const LOST = /the WebGL context was lost/;

/**
 * The known answer: every page draws it when it opens, before it draws for anyone, and its PNG
 * must be the farm's first page's, byte for byte. The skin, its blended outer layer, and the
 * shadow's canvas texture (what a page whose GPU process restarted went on drawing without).
 */
const SELF_CHECK = toWireJob({ kind: 'render', skin: defaultSkin('steve', false), slim: false, size: 64, yaw: 30, pitch: 20, shadow: true, outer: true, bg: null, pose: 'walking' });
/** Pages opened in a row while the GPU process restarts before the task fails. */
const OPEN_TRIES = 3;

/** How often (in batches) a page's memory is read; past `pageHeapLimitBytes` it is replaced. */
const MEMORY_CHECK_EVERY = 32;
/**
 * A page's JS heap above this (or the limit, if lower) is collected to see what is live. A
 * collection every 32 batches stopped the page 10-15 ms each time: p99 of one job at a time
 * 17-24 ms with it, 10-16 ms with this bound (docs/renderer.md, Memory), which keeps a page's
 * heap, and so its memory, from growing as far as V8 alone lets it.
 */
const COLLECT_ABOVE_BYTES = 24 << 20;

interface PageState {
  key: string; browser: Browser; page: Page; cdp: CDPSession; textures: PageTextures;
  /** The page's API (window.skinfarm), which `call` calls functions of (no expression to compile per batch). */
  api: string;
  /** Which opening this is: a failure reported late by an older page must not drop a newer one. */
  generation: number;
  /** Why the page crashed, once it has; CDP calls to a crashed page never answer. */
  crash: Error | null;
  /** The reject of every call waiting on the page, failed at once by a crash. */
  waiting: Set<(error: Error) => void>;
  /** Batches on this page now, and since its last memory reading. */
  busy: number; batches: number;
  /** Its memory passed the bound: it is replaced when no batch is on it. */
  worn: boolean;
  /** Jobs it has drawn (the self-check not counted). */
  drawn: number;
  /** The GPU process its WebGL context lives in: once that ends, nothing the page drew is answered. */
  gpu: Proc | null;
  /** The digest of its self-check render. */
  selfCheck: string;
}
let state: Promise<PageState> | null = null;
/** The browser `state` is in. */
let stateKey = '';
let generation = 0;

async function openPage(key: string, opening: number): Promise<PageState> {
  // The request (with its port) reaches the relay through the main thread (PageWorker).
  const browser = await connectBrowser(key, (request) => parentPort!.postMessage(request, [request.port]), 60_000);
  const page = await browser.newPage();
  try {
    // The main thread learns the page's id before it loads: a page that hangs while loading is closed too.
    const cdp = await page.createCDPSession();
    const { targetInfo } = await cdp.send('Target.getTargetInfo');
    parentPort!.postMessage({ opened: targetInfo.targetId } satisfies OpenedMessage);
    return { ...await loadScene(browser, page, cdp), key, generation: opening };
  } catch (error) {
    // A page that did not come up is closed, so a retry starts clean.
    await page.close().catch(() => {});
    await browser.disconnect().catch(() => {});
    throw error;
  }
}

async function loadScene(browser: Browser, page: Page, cdp: CDPSession): Promise<Omit<PageState, 'key' | 'generation'>> {
  await page.setRequestInterception(true);
  page.on('request', (request) => {
    const file = FILES[new URL(request.url()).pathname];
    if (request.url().startsWith(ORIGIN) && file) void request.respond({ status: 200, contentType: file.type, body: file.body });
    else void request.abort();
  });
  // Generous: on a loaded two-core machine a new page and three.js can take many seconds.
  await page.goto(`${ORIGIN}/index.html`, { waitUntil: 'load', timeout: 60_000 });
  await page.waitForFunction(() => window.sceneReady === true || window.sceneError !== undefined, { timeout: 60_000 });
  const failed = await page.evaluate(() => (window.sceneReady === true ? null : window.sceneError));
  if (failed) throw new Error(`${SELF_CHECK_FAILED}the scene did not load: ${failed}`);
  await cdp.send('Performance.enable');
  const { result } = await cdp.send('Runtime.evaluate', { expression: 'window.skinfarm' });
  const state = {
    browser, page, cdp, api: result.objectId!, textures: new PageTextures(), crash: null as Error | null, waiting: new Set<(error: Error) => void>(),
    busy: 0, batches: 0, worn: false, drawn: 0, gpu: null, selfCheck: '',
  };
  page.once('error', (error) => {
    state.crash = error;
    for (const reject of state.waiting) reject(error);
  });
  return state;
}

/**
 * Opens a page whose drawing can be trusted: the browser's GPU process ran from before the page
 * made its WebGL context until after it drew its self-check (so the context lives there; a page
 * opened while it restarted may hold a context already lost, which it learns only later), and the
 * self-check matches the task's (null while the farm starts). A page that missed the GPU process
 * is closed and another one opened; one that drew its self-check wrong, or could not load its
 * scene, fails the task with SELF_CHECK_FAILED: the farm replaces the browser.
 */
async function openTrusted(browser: BrowserRef, opening: number, task: WorkerTask): Promise<PageState> {
  const expected = task.selfCheck;
  for (let attempt = 1; ; attempt += 1) {
    const before = gpuProcess(browser.pid);
    const opened = await openPage(browser.key, opening);
    const digest = await selfCheck(opened).catch((error: Error) => {
      if (LOST.test(error.message)) return null;
      closePage(opened);
      throw error;
    });
    // A browser just started may not have its GPU process yet (it has no window to draw): the
    // first one to run is then the one the page's context was made in, or the context was lost,
    // which the self-check or the next batch's checks find.
    const gpu = before ?? gpuProcess(browser.pid);
    if (digest !== null && gpu && gpuStillRunning(gpu)) {
      if (expected !== null && digest !== expected) {
        closePage(opened);
        throw new Error(`${SELF_CHECK_FAILED}a fresh page drew ${digest}, the farm's first page ${expected}`);
      }
      return Object.assign(opened, { gpu, selfCheck: digest });
    }
    closePage(opened);
    if (attempt === OPEN_TRIES) throw new Error(`${SELF_CHECK_FAILED}the GPU process kept restarting while a page opened`);
  }
}

/** Draws the self-check; its PNG's digest. */
async function selfCheck(current: PageState): Promise<string> {
  const [answer] = await call(current, 'renderBatch', current.textures.forBatch([SELF_CHECK]));
  if (typeof answer !== 'string') throw new Error(`the self-check render failed: ${answer.error}`);
  return createHash('sha256').update(answer).digest('base64url');
}

/**
 * `work`, or the page's crash if that comes first. Not Promise.race against one promise that
 * lives as long as the page: each race left a reaction on it that held the race's result (a
 * batch's images) until the page closed, and the thread's heap grew by every reply.
 */
function unlessCrashed<T>(current: PageState, work: Promise<T>): Promise<T> {
  if (current.crash) return Promise.reject(current.crash);
  return new Promise<T>((resolve, reject) => {
    current.waiting.add(reject);
    work.then(resolve, reject).finally(() => current.waiting.delete(reject));
  });
}

/**
 * The page for a task, counted busy until the task gives it back. Two tasks can ask at once: only
 * one of them replaces a dead or worn page, the other takes the new one (never the one dropped).
 */
async function takePage(browser: BrowserRef, task: WorkerTask): Promise<PageState> {
  const { key } = browser;
  while (state && stateKey === key) {
    const asked = state;
    const current = await asked.catch(() => null);
    if (state !== asked) continue;
    if (current && current.worn && current.busy === 0) drop(current);
    else if (current && current.browser.connected && !current.page.isClosed()) {
      current.busy += 1;
      return current;
    }
    break;
  }
  stateKey = key;
  generation += 1;
  state = openTrusted(browser, generation, task);
  const opened = await state;
  opened.busy += 1;
  return opened;
}

/**
 * Calls a function of the page's API with `args` (sent as JSON values: no script to compile);
 * fails when the page crashes. A page that does not answer is the farm's to give up: it ends
 * this thread when the job's time is up.
 */
async function call<Name extends keyof PageApi>(current: PageState, name: Name, ...args: Parameters<PageApi[Name]>): Promise<ReturnType<PageApi[Name]>> {
  current.busy += 1;
  try {
    const reply = await unlessCrashed(current, current.cdp.send('Runtime.callFunctionOn', {
      objectId: current.api,
      functionDeclaration: `function (...args) { return this.${name}(...args); }`,
      arguments: args.map((value) => ({ value })),
      returnByValue: true,
    }));
    if (reply.exceptionDetails) throw new Error(reply.exceptionDetails.exception?.description ?? reply.exceptionDetails.text);
    return reply.result.value;
  } finally {
    current.busy -= 1;
  }
}

/**
 * Reads the page's heap now and then; one past the bound after a collection is marked for
 * replacement. Only a heap grown past COLLECT_ABOVE_BYTES is collected first: a collection stops
 * the page for milliseconds.
 */
async function checkMemory(current: PageState, limit: number): Promise<void> {
  current.batches += 1;
  if (current.batches < MEMORY_CHECK_EVERY) return;
  current.batches = 0;
  if ((await jsHeapUsed(current)) <= Math.min(limit, COLLECT_ABOVE_BYTES)) return;
  await unlessCrashed(current, current.cdp.send('HeapProfiler.collectGarbage'));
  if ((await jsHeapUsed(current)) > limit) current.worn = true;
}

async function jsHeapUsed(current: PageState): Promise<number> {
  const { metrics } = await unlessCrashed(current, current.cdp.send('Performance.getMetrics'));
  return metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? 0;
}

/** What the page holds; its JS heap after a full collection, so garbage not yet collected does not count. */
async function pageMemory(current: PageState): Promise<PageMemory> {
  await unlessCrashed(current, current.cdp.send('HeapProfiler.collectGarbage'));
  const jsHeapBytes = await jsHeapUsed(current);
  const counts = await call(current, 'memory');
  return { jsHeapBytes, ...counts };
}

/** Forgets a page that failed (crashed, hung, lost its browser or is in doubt): the next task opens a new one. */
function drop(current: PageState): void {
  if (current.generation === generation) state = null;
  closePage(current);
}

function closePage(current: PageState): void {
  void current.page.close().catch(() => {}).finally(() => current.browser.disconnect().catch(() => {}));
}

/**
 * Gives memory back after a load. A page that has drawn is replaced by a fresh one (its renderer
 * keeps a heap the load grew, the GPU process its buffers: ~30 MB each above a new page), unless
 * a batch is on it; then this thread collects its garbage.
 */
async function trim(current: PageState, task: WorkerTask, browser: BrowserRef): Promise<void> {
  if (current.drawn > 0 && current.busy === 1) {
    drop(current);
    (await takePage(browser, task)).busy -= 1;
  }
  collectGarbage();
}

/**
 * Gives the page back until the next task, which opens a fresh one (takePage): the farm parks all
 * but its first page when idle, each ~50 MB of a renderer process and the GPU process's buffers.
 * A page with a batch on it stays; a thread with no page opens none to close it.
 */
async function park(): Promise<void> {
  const current = await state?.catch(() => null);
  if (current && current.busy === 0) drop(current);
  collectGarbage();
}

/** A PNG data URL's bytes in a store of their own (a small Buffer is a slice of a shared pool, which cannot be transferred). */
function fromDataUrl(url: string): Buffer {
  const base64 = url.slice(url.indexOf(',') + 1);
  const png = Buffer.allocUnsafeSlow(Buffer.byteLength(base64, 'base64'));
  return png.subarray(0, png.write(base64, 'base64'));
}

/**
 * A turntable's job as one page job per frame: the page draws them side by side in one frame with
 * one readback, and the texture crosses once (the first frame brings it, the others find it).
 */
function framesOf({ yaws, ...job }: WireJob): WireJob[] {
  return yaws ? yaws.map((yaw) => ({ ...job, yaw })) : [job];
}

/** The page's answers, one per frame, as one per job of the task: a turntable's PNGs, or its first failed frame's error. */
function perJob(jobs: WireJob[], answers: Array<Buffer | { error: string }>): NonNullable<WorkerResult['images']> {
  let at = 0;
  return jobs.map((job) => {
    if (!job.yaws) return answers[at++];
    const frames = answers.slice(at, at += job.yaws.length);
    return frames.find((f): f is { error: string } => !Buffer.isBuffer(f)) ?? frames as Buffer[];
  });
}

export default async function run(task: WorkerTask): Promise<WorkerResult> {
  if (task.probe === 'park') {
    await park();
    return {};
  }
  const browser = task.browsers[slot % task.browsers.length];
  const current = await takePage(browser, task);
  const { textures } = current;
  try {
    if (task.probe === 'info') return { info: { ...await call(current, 'webglInfo'), selfCheck: current.selfCheck } };
    if (task.probe === 'memory') return { memory: await pageMemory(current) };
    if (task.probe === 'trim') {
      await trim(current, task, browser);
      return {};
    }
    const draw = async (jobs: WireJob[]) => {
      const answers: Awaited<ReturnType<PageApi['renderBatch']>> = [];
      for (const run of fittingRuns(jobs)) answers.push(...await call(current, 'renderBatch', textures.forBatch(run)));
      return answers;
    };
    const jobs = task.jobs.flatMap(framesOf);
    const answers = await draw(jobs);
    current.drawn += jobs.length;
    // Should the page ever lack a texture the mirror thought it held, those jobs go once more
    // with their bytes rather than failing.
    const lacking = answers.flatMap((a, i) => (typeof a === 'object' && MISSING.test(a.error) ? [i] : []));
    if (lacking.length > 0) {
      textures.forget(lacking.flatMap((i) => [jobs[i].skin.key, ...(jobs[i].cape ? [jobs[i].cape!.key] : [])]));
      const again = await draw(lacking.map((i) => jobs[i]));
      lacking.forEach((i, n) => { answers[i] = again[n]; });
    }
    // A GPU process that ended before the answer came may have drawn it blank or in part, and the
    // page learns of it only later: checked after the answer, which came after anything it drew.
    if (!gpuStillRunning(current.gpu!)) throw new Error(`${IN_DOUBT}the GPU process it drew on ended`);
    // After the answer, not before it: a collection takes some milliseconds.
    void checkMemory(current, task.pageHeapLimitBytes).catch(() => {});
    const images = answers.map((a) => (typeof a === 'string' ? fromDataUrl(a) : { error: a.error }));
    // The images' stores go to the main thread as they are: no copy on either side.
    const stores = images.flatMap((image) => (image instanceof Uint8Array ? [image.buffer] : []));
    return move({ [transferableSymbol]: stores, [valueSymbol]: { images: perJob(task.jobs, images) } }) as WorkerResult;
  } catch (error) {
    drop(current);
    throw LOST.test((error as Error).message) ? new Error(`${IN_DOUBT}its WebGL context was lost`) : error;
  } finally {
    current.busy -= 1;
  }
}

