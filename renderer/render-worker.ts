// A Piscina worker: owns one page in the shared Chromium (connected over its WebSocket), loads
// the three.js scene once, then renders batches of jobs through one CDP call each.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser, type CDPSession, type Page } from 'puppeteer-core';
import type { PageJob, PageTexture, WireTexture, WorkerTask, WorkerResult } from './jobs.ts';

const ORIGIN = 'http://skinfarm.render';
const here = path.dirname(fileURLToPath(import.meta.url));
const threeDir = path.dirname(createRequire(import.meta.url).resolve('three'));

// Everything the page loads is served from here: no network, no CDN.
const FILES: Record<string, { type: string; body: string }> = {
  '/index.html': {
    type: 'text/html',
    body: `<!doctype html><meta charset="utf-8"><script type="importmap">{"imports":{"three":"/three.module.js"}}</script><script type="module" src="/scene.js"></script>`,
  },
  '/three.module.js': { type: 'text/javascript', body: readFileSync(path.join(threeDir, 'three.module.js'), 'utf8') },
  '/three.core.js': { type: 'text/javascript', body: readFileSync(path.join(threeDir, 'three.core.js'), 'utf8') },
  '/scene.js': { type: 'text/javascript', body: readFileSync(path.join(here, 'page/scene.js'), 'utf8') },
};

/** Texture keys the page holds, in its own eviction order (it keeps the newest 64). */
class PageTextures {
  private readonly keys = new Set<string>();
  static readonly LIMIT = 64;

  forPage(texture: WireTexture): PageTexture {
    if (this.keys.has(texture.key)) return { key: texture.key, width: texture.width, height: texture.height, base64: null };
    this.keys.add(texture.key);
    if (this.keys.size > PageTextures.LIMIT) this.keys.delete(this.keys.values().next().value!);
    return { key: texture.key, width: texture.width, height: texture.height, base64: Buffer.from(texture.data.buffer, texture.data.byteOffset, texture.data.byteLength).toString('base64') };
  }
}

interface PageState { endpoint: string; browser: Browser; page: Page; cdp: CDPSession; textures: PageTextures }
let state: Promise<PageState> | null = null;
let stateEndpoint = '';

async function openPage(endpoint: string): Promise<PageState> {
  const browser = await puppeteer.connect({ browserWSEndpoint: endpoint, defaultViewport: null, protocolTimeout: 60_000 });
  const page = await browser.newPage();
  try {
    return await loadScene(browser, page, endpoint);
  } catch (error) {
    // A page that did not come up is closed, so a retry starts clean.
    await page.close().catch(() => {});
    await browser.disconnect().catch(() => {});
    throw error;
  }
}

async function loadScene(browser: Browser, page: Page, endpoint: string): Promise<PageState> {
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
  return { endpoint, browser, page, cdp, textures: new PageTextures() };
}

async function pageFor(endpoint: string): Promise<PageState> {
  if (state && stateEndpoint === endpoint) {
    const current = await state.catch(() => null);
    if (current && current.browser.connected && !current.page.isClosed()) return current;
  }
  stateEndpoint = endpoint;
  state = openPage(endpoint);
  return state;
}

async function evaluate(cdp: CDPSession, expression: string): Promise<unknown> {
  const reply = await cdp.send('Runtime.evaluate', { expression, returnByValue: true });
  if (reply.exceptionDetails) throw new Error(reply.exceptionDetails.exception?.description ?? reply.exceptionDetails.text);
  return reply.result.value;
}

export default async function run(task: WorkerTask): Promise<WorkerResult> {
  const { cdp, textures } = await pageFor(task.endpoint);
  if (task.info) return { info: (await evaluate(cdp, 'webglInfo()')) as WorkerResult['info'] };
  const jobs: PageJob[] = task.jobs.map((job) => ({ ...job, skin: textures.forPage(job.skin), cape: job.cape ? textures.forPage(job.cape) : null }));
  const answers = (await evaluate(cdp, `renderJobs(${JSON.stringify(jobs)})`)) as Array<string | { error: string }>;
  return {
    images: answers.map((a) => (typeof a === 'string' ? Buffer.from(a.slice(a.indexOf(',') + 1), 'base64') : { error: a.error })),
  };
}
