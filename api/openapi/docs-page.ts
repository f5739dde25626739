// GET /docs: every endpoint of the three services from the same list as /openapi.json, with a
// curl example and, for GET endpoints, a form that calls the endpoint and shows the answer.
import { escapeHtml, layout } from '../skins/pages/layout.ts';
import { ENDPOINTS, type Endpoint, type Param, type ServiceId } from './endpoints.ts';

const TITLES: Record<ServiceId, string> = { skins: 'Skins service', media: 'Media service', search: 'Search service' };

function exampleValue(p: Param): string {
  return p.example ?? (p.default !== undefined ? String(p.default) : '');
}

function curl(e: Endpoint, base: string): string {
  const path = e.path.replace(/\{(\w+)\}/g, (_, n: string) => exampleValue(e.params?.find((p) => p.name === n) ?? ({ name: n } as Param)) || `<${n}>`);
  const required = (e.params ?? []).filter((p) => p.in === 'query' && p.required).map((p) => `${p.name}=${encodeURIComponent(exampleValue(p))}`);
  const url = `${base}${path}${required.length ? `?${required.join('&')}` : ''}`;
  const headers = (e.params ?? []).filter((p) => p.in === 'header').map((p) => ` -H '${p.name}: $KEY'`).join('');
  const admin = e.auth === 'admin' ? ` -H "Authorization: Bearer $SEARCH_ADMIN_TOKEN"` : '';
  if (e.body === 'multipart') return `curl -o out.png -F file=@skin.png -F model=slim '${url}'`;
  const body = e.body ? ` -H 'content-type: application/json' -d '${e.body}'` : '';
  const method = e.method === 'get' ? '' : ` -X ${e.method.toUpperCase()}`;
  return `curl${method}${headers}${admin}${body} '${url}'`;
}

function paramRows(params: Param[]): string {
  return params.map((p) => {
    const range = p.enum ? p.enum.join(' | ') : p.min !== undefined ? `${p.min} .. ${p.max}` : '';
    return `<tr><td><code>${escapeHtml(p.name)}</code></td><td>${p.in}</td><td>${p.type}${p.required ? ', required' : ''}</td><td>${escapeHtml(p.default ?? '')}</td><td>${escapeHtml(range)}</td><td>${escapeHtml(p.description)}</td></tr>`;
  }).join('');
}

function tryForm(e: Endpoint, base: string, id: string): string {
  if (e.method !== 'get' || e.answer === 'redirect' || e.answer === 'html') return '';
  const inputs = (e.params ?? []).map((p) => `<label>${escapeHtml(p.name)} <input name="${escapeHtml(p.name)}" data-in="${p.in}" value="${escapeHtml(exampleValue(p))}" size="14"></label>`).join(' ');
  return `<form class="try" data-base="${escapeHtml(base)}" data-path="${escapeHtml(e.path)}" data-answer="${e.answer}" id="try-${id}">${inputs} <button class="button" type="submit">Try it</button><div class="out"></div></form>`;
}

const SCRIPT = `
document.querySelectorAll('form.try').forEach((form) => form.addEventListener('submit', async (event) => {
  event.preventDefault();
  let path = form.dataset.path;
  const query = new URLSearchParams();
  const headers = {};
  for (const input of form.querySelectorAll('input')) {
    if (!input.value) continue;
    if (input.dataset.in === 'path') path = path.replace('{' + input.name + '}', encodeURIComponent(input.value));
    else if (input.dataset.in === 'header') headers[input.name] = input.value;
    else query.set(input.name, input.value);
  }
  const url = form.dataset.base + path + (query.toString() ? '?' + query : '');
  const out = form.querySelector('.out');
  out.textContent = 'GET ' + url;
  if (form.dataset.answer === 'png') {
    const img = document.createElement('img');
    img.src = url;
    img.alt = 'answer';
    out.append(document.createElement('br'), img);
    return;
  }
  try {
    const response = await fetch(url, { headers });
    const text = await response.text();
    const pre = document.createElement('pre');
    pre.className = 'answer';
    pre.textContent = response.status + '\\n' + text.slice(0, 4000);
    out.append(pre);
  } catch (error) {
    out.append(' failed: ' + error);
  }
}));`;

export function renderDocsPage(urls: Record<ServiceId, string>): string {
  const sections = (['skins', 'media', 'search'] as const).map((service) => {
    const items = ENDPOINTS.filter((e) => e.service === service).map((e, i) => `
<div class="card endpoint"><h3><code>${e.method.toUpperCase()} ${escapeHtml(e.path)}</code></h3><p>${escapeHtml(e.summary)}${e.auth ? ` <small>(auth: ${e.auth})</small>` : ''}</p>
${e.params?.length ? `<table><tr><th>name</th><th>in</th><th>type</th><th>default</th><th>values</th><th></th></tr>${paramRows(e.params)}</table>` : ''}
${e.errors?.length ? `<p><small>errors: ${e.errors.map((c) => `<code>${c}</code>`).join(' ')}</small></p>` : ''}
<pre>${escapeHtml(curl(e, urls[service]))}</pre>${tryForm(e, urls[service], `${service}-${i}`)}</div>`).join('');
    return `<h2 id="${service}">${TITLES[service]} <small>${escapeHtml(urls[service])}</small></h2>${items}`;
  }).join('');
  const intro = `<p>Generated from the same description as <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).
JSON answers of the skins service use the envelope <code>{code, success, message, data, timestamp}</code>;
<code>pretty=0</code> gives compact JSON. Jump to <a href="#skins">skins</a>, <a href="#media">media</a>, <a href="#search">search</a>.</p>`;
  return layout('文档', `${intro}${sections}<script>${SCRIPT}</script>`);
}
