// GET /status: the service's state for a person. Nothing here calls an upstream; the probe
// button asks /v1/status/probe (rate limited) from the browser.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import sharp from 'sharp';
import { escapeHtml, layout } from './layout.ts';

// got does not export its package.json; read it next to the resolved entry point.
const gotEntry = createRequire(import.meta.url).resolve('got');
const GOT_VERSION: string = JSON.parse(readFileSync(`${gotEntry.slice(0, gotEntry.lastIndexOf('/node_modules/got/'))}/node_modules/got/package.json`, 'utf8')).version;

export interface StatusPageData {
  version: string;
  uptimeMs: number;
  responseMs: number;
  cache: { backend: string; entries: number; hits: number; misses: number; stale: number; bytes: number | null };
  sources: Record<string, { enabled: boolean; ok: boolean; last_error: string | null }>;
}

function formatBytes(bytes: number | null): string {
  if (bytes === null) return '未知';
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

export function renderStatusPage(data: StatusPageData, now = new Date()): string {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const rows = (pairs: [string, string][]) => pairs.map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${v}</td></tr>`).join('');
  const sources = Object.entries(data.sources).map(([id, s]) =>
    `<tr><th>${escapeHtml(id)}</th><td>${s.enabled ? (s.ok ? '正常' : '异常') : '已停用'}${s.last_error ? ` <small>(最近错误: ${escapeHtml(s.last_error)})</small>` : ''}</td></tr>`).join('');
  const body = `
<div class="card"><h2>Skinfarm skins service</h2><table>${rows([
    ['版本', escapeHtml(data.version)],
    ['运行时间', `${Math.round(data.uptimeMs / 1000)} s`],
    ['图像库', `sharp ${escapeHtml(sharp.versions.sharp)} (libvips ${escapeHtml(sharp.versions.vips)}) 正常`],
    ['HTTP 客户端', `got ${escapeHtml(GOT_VERSION)} 正常`],
    ['本次响应时间', `<span id="response-time">${data.responseMs.toFixed(2)} ms</span>`],
    ['服务器时间', `<time datetime="${now.toISOString()}">${escapeHtml(now.toISOString())}</time> (${escapeHtml(zone)})`],
  ])}</table></div>
<div class="card"><h3>数据源</h3><table>${sources}</table>
<p><button class="button" id="probe" type="button">检测上游连接</button> <span id="probe-result"></span></p></div>
<div class="card"><h3>缓存</h3><table>${rows([
    ['后端', escapeHtml(data.cache.backend)],
    ['条目', String(data.cache.entries)],
    ['大小', formatBytes(data.cache.bytes)],
    ['命中', String(data.cache.hits)],
    ['未命中', String(data.cache.misses)],
    ['过期后仍使用', String(data.cache.stale)],
  ])}</table></div>
<div class="card"><h3>入口</h3><ul>
<li><a href="/v1/status">/v1/status</a> (JSON)</li><li><a href="/v1/sources">/v1/sources</a></li>
<li><a href="/docs">/docs</a> 文档</li><li><a href="/openapi.json">/openapi.json</a></li><li><a href="/">首页</a></li></ul></div>
<script>
document.getElementById('probe').addEventListener('click', async () => {
  const out = document.getElementById('probe-result');
  out.textContent = '检测中…';
  try {
    const res = await fetch('/v1/status/probe?pretty=0');
    const body = await res.json();
    out.textContent = body.success
      ? Object.entries(body.data).map(([id, r]) => id + ': ' + (r.ok ? 'OK ' + r.ms + ' ms' : '失败 (' + r.error + ')')).join(' · ')
      : body.message;
  } catch (e) { out.textContent = '请求失败'; }
});
</script>`;
  return layout('状态', body);
}
