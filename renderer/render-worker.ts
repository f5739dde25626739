// A Piscina worker: owns one page in one of the farm's Chromium instances (connected over its
// WebSocket), loads the three.js scene once, then renders batches of jobs through one CDP call each.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import puppeteer, { type Browser, type CDPSession, type Page } from 'puppeteer-core';
import { CAPE_SIZE, capeFaces, PART_NAMES, partFaces, partSize, POSES } from '../shared/skin-layout.ts';
import type { PageJob, PageTexture, WireJob, WireTexture, WorkerTask, WorkerResult } from './jobs.ts';

const ORIGIN = 'http://skinfarm.render';
const here = path.dirname(fileURLToPath(import.meta.url));
const threeDir = path.dirname(createRequire(import.meta.url).resolve('three'));

/** The texture layout and poses the page draws with, from the one definition in shared/skin-layout.ts. */
const LAYOUT = {
  parts: Object.fromEntries(['classic', 'slim'].map((model) => [model, Object.fromEntries(PART_NAMES.map((part) => [part, {
    size: partSize(part, model === 'slim'),
    inner: partFaces(part, 'inner', model === 'slim'),
    outer: partFaces(part, 'outer', model === 'slim'),
  }]))])),
  cape: { size: CAPE_SIZE, faces: capeFaces() },
  poses: POSES,
};

/** Textures a page keeps (the newest): the page evicts by this and the worker mirrors it. */
const TEXTURE_LIMIT = 64;

// Everything the page loads is served from here: no network, no CDN.
const FILES: Record<string, { type: string; body: string }> = {
  '/index.html': {
    type: 'text/html',
    body: `<!doctype html><meta charset="utf-8"><script type="importmap">{"imports":{"three":"/three.module.js"}}</script><script type="module" src="/scene.js"></script>`,
  },
  '/three.module.js': { type: 'text/javascript', body: readFileSync(path.join(threeDir, 'three.module.js'), 'utf8') },
  '/three.core.js': { type: 'text/javascript', body: readFileSync(path.join(threeDir, 'three.core.js'), 'utf8') },
  '/scene.js': { type: 'text/javascript', body: readFileSync(path.join(here, 'page/scene.js'), 'utf8') },
  '/edges.js': { type: 'text/javascript', body: readFileSync(path.join(here, 'page/edges.js'), 'utf8') },
  '/skin-layout.js': { type: 'text/javascript', body: `export default ${JSON.stringify(LAYOUT)};` },
  '/page-settings.js': { type: 'text/javascript', body: `export const TEXTURE_LIMIT = ${TEXTURE_LIMIT};` },
};

/**
 * Texture keys the page holds, least recently used first: the same rule as the page's takeIn()
 * (a batch's textures are touched or added in job order, then the oldest beyond TEXTURE_LIMIT go).
 */
class PageTextures {
  private readonly keys = new Set<string>();

  /** The batch's jobs as the page gets them: bytes only for textures the page lacks. */
  forBatch(jobs: WireJob[]): PageJob[] {
    const mapped = jobs.map((job) => ({ ...job, skin: this.touch(job.skin), cape: job.cape ? this.touch(job.cape) : null }));
    for (const key of this.keys) {
      if (this.keys.size <= TEXTURE_LIMIT) break;
      this.keys.delete(key);
    }
    return mapped;
  }

  /** Forgets keys the page turned out to lack, so their bytes are sent again. */
  forget(keys: Iterable<string>): void {
    for (const key of keys) this.keys.delete(key);
  }

  private touch(texture: WireTexture): PageTexture {
    const known = this.keys.delete(texture.key);
    this.keys.add(texture.key);
    return { key: texture.key, width: texture.width, height: texture.height, base64: known ? null : Buffer.from(texture.data.buffer, texture.data.byteOffset, texture.data.byteLength).toString('base64') };
  }
}

/** The page's error for a texture it does not hold. */
const MISSING = /^texture \S+ is not in the page$/;

/** This worker's page number: the page lives in browser slot % browsers. */
const { slot } = Piscina.workerData as { slot: number };

interface PageState {
  endpoint: string; browser: Browser; page: Page; cdp: CDPSession; textures: PageTextures;
  /** Which opening this is: a failure reported late by an older page must not drop a newer one. */
  generation: number;
  /** Rejects when the page crashes: CDP calls to a crashed page never answer, so they race this. */
  crashed: Promise<never>;
}
let state: Promise<PageState> | null = null;
let stateEndpoint = '';
let generation = 0;

async function openPage(endpoint: string, opening: number): Promise<PageState> {
  const browser = await puppeteer.connect({ browserWSEndpoint: endpoint, defaultViewport: null, protocolTimeout: 60_000 });
  const page = await browser.newPage();
  try {
    return { ...await loadScene(browser, page), endpoint, generation: opening };
  } catch (error) {
    // A page that did not come up is closed, so a retry starts clean.
    await page.close().catch(() => {});
    await browser.disconnect().catch(() => {});
    throw error;
  }
}

async function loadScene(browser: Browser, page: Page): Promise<Omit<PageState, 'endpoint' | 'generation'>> {
  await page.setRequestInterception(true);
  page.on('request', (request) => {
    const file = FILES[new URL(request.url()).pathname];
    if (request.url().startsWith(ORIGIN) && file) void request.respond({ status: 200, contentType: file.type, body: file.body });
    else void request.abort();
  });
  // Generous: on a loaded two-core machine a new page and three.js can take many seconds.
  await page.goto(`${ORIGIN}/index.html`, { waitUntil: 'load', timeout: 60_000 });
  await page.waitForFunction('window.sceneReady === true', { timeout: 60_000 });
  const cdp = await page.createCDPSession();
  const crashed = new Promise<never>((_, reject) => page.once('error', reject));
  crashed.catch(() => {});
  return { browser, page, cdp, textures: new PageTextures(), crashed };
}

async function pageFor(endpoint: string): Promise<PageState> {
  // Two batches can ask at once: only one of them replaces a dead page, the other waits for it.
  while (state && stateEndpoint === endpoint) {
    const asked = state;
    const current = await asked.catch(() => null);
    if (current && current.browser.connected && !current.page.isClosed()) return current;
    if (state === asked) break;
  }
  stateEndpoint = endpoint;
  generation += 1;
  state = openPage(endpoint, generation);
  return state;
}

/** Runs an expression in the page; fails when the page crashes or takes longer than `timeoutMs`. */
async function evaluate(current: PageState, expression: string, timeoutMs: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`page did not answer in ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const reply = await Promise.race([current.cdp.send('Runtime.evaluate', { expression, returnByValue: true }), current.crashed, late]);
    if (reply.exceptionDetails) throw new Error(reply.exceptionDetails.exception?.description ?? reply.exceptionDetails.text);
    return reply.result.value;
  } finally {
    clearTimeout(timer);
  }
}

/** Forgets a page that failed (crashed, hung or lost its browser): the next task opens a new one. */
function drop(current: PageState): void {
  if (current.generation === generation) state = null;
  void current.page.close().catch(() => {}).finally(() => current.browser.disconnect().catch(() => {}));
}

export default async function run(task: WorkerTask): Promise<WorkerResult> {
  const current = await pageFor(task.endpoints[slot % task.endpoints.length]);
  const { textures } = current;
  try {
    if (task.info) return { info: (await evaluate(current, 'webglInfo()', task.timeoutMs)) as WorkerResult['info'] };
    const draw = (jobs: WireJob[]) => evaluate(current, `renderJobs(${JSON.stringify(textures.forBatch(jobs))})`, task.timeoutMs) as Promise<Array<string | { error: string }>>;
    const answers = await draw(task.jobs);
    // Should the page ever lack a texture the mirror thought it held, those jobs go once more
    // with their bytes rather than failing.
    const lacking = answers.flatMap((a, i) => (typeof a === 'object' && MISSING.test(a.error) ? [i] : []));
    if (lacking.length > 0) {
      textures.forget(lacking.flatMap((i) => [task.jobs[i].skin.key, ...(task.jobs[i].cape ? [task.jobs[i].cape!.key] : [])]));
      const again = await draw(lacking.map((i) => task.jobs[i]));
      lacking.forEach((i, n) => { answers[i] = again[n]; });
    }
    return {
      images: answers.map((a) => (typeof a === 'string' ? Buffer.from(a.slice(a.indexOf(',') + 1), 'base64') : { error: a.error })),
    };
  } catch (error) {
    drop(current);
    throw error;
  }
}
