// GET /status: the service's state for a person. Nothing here calls an upstream; the probe
// button asks /v1/status/probe (rate limited) from the browser.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { html, scriptValue, type Html } from '../../http/html.ts';
import type { Lang } from '../../http/i18n.ts';
import { page, type PageFrame } from '../../http/page.ts';
import { ENCODERS, type Encoder, type ImageLibraryState } from '../readiness-checks.ts';

// got does not export its package.json; read it next to the resolved entry point.
const gotEntry = createRequire(import.meta.url).resolve('got');
const GOT_VERSION: string = JSON.parse(readFileSync(`${gotEntry.slice(0, gotEntry.lastIndexOf('/node_modules/got/'))}/node_modules/got/package.json`, 'utf8')).version;

export interface StatusPageData {
  version: string;
  uptimeMs: number;
  responseMs: number;
  cache: { backend: string; entries: number; hits: number; misses: number; stale: number; bytes: number | null };
  sources: Record<string, { enabled: boolean; ok: boolean; last_error: string | null }>;
  /** The render farm (null when RENDER_WORKERS=0): whether it draws, and its counters. */
  render: RenderState | null;
  /** sharp, and whether each encoder the answers use works here. */
  imageLibrary: ImageLibraryState;
}

export interface RenderState {
  state: 'ok' | 'degraded' | 'down'; detail: string; pagesAlive: number; workers: number; lastDrawnAt: string | null; failedInARow: number; lastError: string | null;
  completed: number; failed: number; browserRestarts: number; watchdogRestarts: number; webglRenderer: string;
}

const TEXT = {
  en: {
    title: 'Status', heading: 'Skinfarm skins service', unknown: 'unknown', ok: 'OK', failing: 'failing', disabled: 'disabled', lastError: 'last error',
    version: 'Version', uptime: 'Uptime', imageLibrary: 'Image library', httpClient: 'HTTP client', responseTime: 'This response took',
    serverTime: 'Server time', sources: 'Sources', probe: 'Probe the upstreams', probing: 'Probing…', probeFailed: 'failed',
    requestFailed: 'The request failed', cache: 'Cache', backend: 'Backend', entries: 'Entries', size: 'Size', hits: 'Hits',
    misses: 'Misses', stale: 'Served stale', entryPoints: 'Entry points', docs: 'documentation', home: 'home page',
    renderer: 'Renderer', state: 'State', degraded: 'degraded', down: 'cannot draw', off: 'off (RENDER_WORKERS=0): avatars and textures only',
    pagesAlive: 'Pages alive', lastRender: 'Last render', never: 'none yet', failedInARow: 'Failures in a row', jobs: 'Jobs drawn / failed', restarts: 'Browser restarts (watchdog)', webgl: 'WebGL',
  },
  zh: {
    title: '状态', heading: 'Skinfarm 皮肤服务', unknown: '未知', ok: '正常', failing: '异常', disabled: '已停用', lastError: '最近错误',
    version: '版本', uptime: '运行时间', imageLibrary: '图像库', httpClient: 'HTTP 客户端', responseTime: '本次响应时间',
    serverTime: '服务器时间', sources: '数据源', probe: '检测上游连接', probing: '检测中…', probeFailed: '失败',
    requestFailed: '请求失败', cache: '缓存', backend: '后端', entries: '条目', size: '大小', hits: '命中',
    misses: '未命中', stale: '过期后仍使用', entryPoints: '入口', docs: '文档', home: '首页',
    renderer: '渲染器', state: '状态', degraded: '降级', down: '无法渲染', off: '已关闭（RENDER_WORKERS=0）：仅头像与材质',
    pagesAlive: '存活页面', lastRender: '最近一次渲染', never: '尚无', failedInARow: '连续失败', jobs: '已完成 / 失败', restarts: '浏览器重启（看门狗）', webgl: 'WebGL',
  },
} satisfies Record<Lang, Record<string, string>>;

function formatBytes(bytes: number | null, unknown: string): string {
  if (bytes === null) return unknown;
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

/** The renderer's card: its state first (what an operator looks for when images fail), then its counters. */
function renderRows(render: RenderState | null, text: (typeof TEXT)[Lang], rows: (pairs: Array<[string, unknown]>) => Html[]): Html[] {
  if (!render) return rows([[text.state, text.off]]);
  const state = { ok: text.ok, degraded: text.degraded, down: text.down }[render.state];
  return rows([
    [text.state, html`<strong>${state}</strong> <small>(${render.detail})</small>`],
    [text.pagesAlive, `${render.pagesAlive} / ${render.workers}`],
    [text.lastRender, render.lastDrawnAt ? html`<time datetime="${render.lastDrawnAt}">${render.lastDrawnAt}</time>` : text.never],
    [text.failedInARow, render.lastError ? html`${render.failedInARow} <small>(${text.lastError}: ${render.lastError})</small>` : render.failedInARow],
    [text.jobs, `${render.completed} / ${render.failed}`],
    [text.restarts, `${render.browserRestarts} (${render.watchdogRestarts})`],
    [text.webgl, render.webglRenderer],
  ]);
}

const ENCODER_NAMES: Record<Encoder, string> = { png: 'PNG', webp: 'WebP', avif: 'AVIF', gif: 'GIF' };

/** sharp's versions, then each encoder as this process found it (a failing one with its reason). */
function imageLibraryLine(library: ImageLibraryState, text: (typeof TEXT)[Lang]): Html {
  const encoders = ENCODERS.map((e, i) => {
    const problem = library.encoders[e];
    return html`${i > 0 && ' · '}${problem === null ? `${ENCODER_NAMES[e]} ${text.ok}` : html`<strong>${ENCODER_NAMES[e]} ${text.failing}</strong> <small>(${problem})</small>`}`;
  });
  return html`sharp ${library.sharp} (libvips ${library.vips}): ${encoders}`;
}

export function renderStatusPage(frame: PageFrame, data: StatusPageData, now = new Date()): string {
  const text = TEXT[frame.lang];
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const rows = (pairs: Array<[string, unknown]>) => pairs.map(([k, v]) => html`<tr><th>${k}</th><td>${v}</td></tr>`);
  const sources = Object.entries(data.sources).map(([id, s]) =>
    html`<tr><th>${id}</th><td>${s.enabled ? (s.ok ? text.ok : text.failing) : text.disabled}${s.last_error && html` <small>(${text.lastError}: ${s.last_error})</small>`}</td></tr>`);
  const table = (content: Html[]) => html`<table class="plain">${content}</table>`;
  return page(frame, `${text.title} · Skinfarm`, html`
<div class="card"><h1>${text.heading}</h1>${table(rows([
    [text.version, data.version],
    [text.uptime, `${Math.round(data.uptimeMs / 1000)} s`],
    [text.imageLibrary, imageLibraryLine(data.imageLibrary, text)],
    [text.httpClient, `got ${GOT_VERSION} ${text.ok}`],
    [text.responseTime, html`<span id="response-time">${data.responseMs.toFixed(2)} ms</span>`],
    [text.serverTime, html`<time datetime="${now.toISOString()}">${now.toISOString()}</time> (${zone})`],
  ]))}</div>
<div class="card"><h2>${text.sources}</h2>${table(sources)}
<p><button class="button" id="probe" type="button">${text.probe}</button> <span id="probe-result"></span></p></div>
<div class="card"><h2>${text.renderer}</h2>${table(renderRows(data.render, text, rows))}</div>
<div class="card"><h2>${text.cache}</h2>${table(rows([
    [text.backend, data.cache.backend],
    [text.entries, data.cache.entries],
    [text.size, formatBytes(data.cache.bytes, text.unknown)],
    [text.hits, data.cache.hits],
    [text.misses, data.cache.misses],
    [text.stale, data.cache.stale],
  ]))}</div>
<div class="card"><h2>${text.entryPoints}</h2><ul>
<li><a href="/v1/status">/v1/status</a> (JSON)</li><li><a href="/v1/sources">/v1/sources</a></li>
<li><a href="/docs">/docs</a> ${text.docs}</li><li><a href="/openapi.json">/openapi.json</a></li><li><a href="/">${text.home}</a></li></ul></div>
<script>
document.getElementById('probe').addEventListener('click', async () => {
  const out = document.getElementById('probe-result');
  out.textContent = ${scriptValue(text.probing)};
  try {
    const res = await fetch('/v1/status/probe?pretty=0');
    const body = await res.json();
    out.textContent = body.success
      ? Object.entries(body.data).map(([id, r]) => id + ': ' + (r.ok ? 'OK ' + r.ms + ' ms' : ${scriptValue(text.probeFailed)} + ' (' + r.error + ')')).join(' · ')
      : ${scriptValue(text.requestFailed)} + ' (' + body.code + ')';
  } catch (e) { out.textContent = ${scriptValue(text.requestFailed)}; }
});
</script>`, { section: 'status' });
}
