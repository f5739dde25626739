// GET /docs: the OpenAPI document rendered for people. A section per service and a card per
// endpoint with its parameters, a curl example and, for GET endpoints, a form that calls the
// endpoint from the browser and shows the answer (JSON, image, video or text) inline.
import type { Lang } from '../http/i18n.ts';
import { escapeHtml, layout, scriptString } from '../skins/pages/layout.ts';
import { METHODS, type Method, type OpenApiDocument, type Operation, type Parameter, type ServiceId } from './openapi.ts';

// The page's own words; the endpoint descriptions come from the OpenAPI document (English).
const TEXT = {
  en: {
    title: 'API docs', name: 'name', in: 'in', type: 'type', fallback: 'default', values: 'values', meaning: 'meaning', required: 'required',
    open: 'open', defaultOption: 'default', tryIt: 'Try it', body: 'Body', schema: 'schema', schemas: 'Schemas', service: 'service',
    machine: 'Machine-readable:', version: 'version', note: '', failed: 'failed:',
  },
  zh: {
    title: 'API 文档', name: '名称', in: '位置', type: '类型', fallback: '默认值', values: '取值', meaning: '含义', required: '必填',
    open: '打开', defaultOption: '默认', tryIt: '试一试', body: '请求体', schema: '结构', schemas: '数据结构', service: '服务',
    machine: '机器可读：', version: '版本', note: '各接口的说明取自 OpenAPI 文档（英文）。', failed: '失败：',
  },
} satisfies Record<Lang, Record<string, string>>;
type Text = (typeof TEXT)[Lang];

interface Endpoint { service: ServiceId; base: string; path: string; method: Method; op: Operation }

/** A credential a request can carry, read from the operation's security schemes. */
interface Credential {
  name: string; in: string; prefix: string; curl: string | undefined; optional: boolean; description: string;
  /** Whether the try-it form asks for it (cookies and Basic are left to the browser). */
  asked: boolean;
}

/** One line of a parameter table: a parameter, a credential or a field of a form body. */
interface Field { name: string; where: string; required: boolean; schema: Record<string, unknown>; description: string }

function endpoints(doc: OpenApiDocument, service: ServiceId): Endpoint[] {
  return Object.entries(doc.paths).flatMap(([path, item]) => {
    const base = item.servers.find((s) => s['x-service'] === service)?.url ?? '';
    // HEAD twins of GET endpoints get no card of their own: the GET card says so.
    return METHODS.filter((method) => method !== 'head').flatMap((method) => {
      const op = item[method];
      return op?.tags.includes(service) ? [{ service, base, path, method, op }] : [];
    });
  });
}

const anchor = (e: Endpoint) => `${e.service}-${e.op.operationId}`;

/** Escaped text with its `code spans` (descriptions are CommonMark in OpenAPI) shown as code. */
const prose = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');

function credentials(doc: OpenApiDocument, op: Operation): Credential[] {
  const requirements = op.security ?? [];
  const optional = requirements.some((r) => Object.keys(r).length === 0);
  return requirements.flatMap((r) => Object.keys(r)).map((id) => {
    const scheme = doc.components.securitySchemes[id];
    const common = { curl: scheme['x-curl'], optional, description: scheme.description };
    if (scheme.type === 'apiKey') return { ...common, name: scheme.name!, in: scheme.in!, prefix: '', asked: scheme.in !== 'cookie' };
    const bearer = scheme.scheme === 'bearer';
    return { ...common, name: 'Authorization', in: 'header', prefix: bearer ? 'Bearer ' : 'Basic ', asked: bearer, description: `${bearer ? 'Bearer' : 'Basic'}: ${scheme.description}` };
  });
}

/** Type, allowed values and default of a schema, as the table shows them. */
function schemaText(schema: Record<string, unknown>): { type: string; values: string; fallback: string } {
  const { minimum: min, maximum: max } = schema;
  const values = Array.isArray(schema.enum) ? schema.enum.join(' | ')
    : min !== undefined ? (max !== undefined ? `${min} .. ${max}` : `≥ ${min}`)
      : typeof schema.format === 'string' ? schema.format
        : typeof schema.pattern === 'string' ? `pattern ${schema.pattern}` : '';
  return { type: [schema.type ?? ''].flat().join(' or '), values, fallback: schema.default === undefined ? '' : String(schema.default) };
}

function fieldTable(text: Text, fields: Field[]): string {
  if (!fields.length) return '';
  const rows = fields.map((f) => {
    const s = schemaText(f.schema);
    return `<tr><td><code>${escapeHtml(f.name)}</code></td><td>${escapeHtml(f.where)}</td><td>${escapeHtml(s.type)}${f.required ? ` <b>${text.required}</b>` : ''}</td>`
      + `<td>${escapeHtml(s.fallback)}</td><td>${escapeHtml(s.values)}</td><td>${prose(f.description)}</td></tr>`;
  });
  return `<table class="params"><tr><th>${text.name}</th><th>${text.in}</th><th>${text.type}</th><th>${text.fallback}</th><th>${text.values}</th><th>${text.meaning}</th></tr>${rows.join('')}</table>`;
}

const parameterFields = (params: Parameter[]): Field[] => params.map((p) => ({ name: p.name, where: p.in, required: p.required, schema: p.schema, description: p.description }));
const credentialFields = (creds: Credential[]): Field[] => creds.map((c) => ({ name: c.name, where: c.in, required: !c.optional, schema: { type: 'credential' }, description: c.description }));

const successStatus = (op: Operation) => Object.keys(op.responses).find((s) => s.startsWith('2') || s.startsWith('3'))!;
const contentTypes = (op: Operation) => Object.keys(op.responses[successStatus(op)].content ?? {});

function example(e: Endpoint): string {
  const params = e.op.parameters ?? [];
  const path = e.path.replace(/\{(\w+)\}/g, (whole, name: string) => String(params.find((p) => p.name === name)?.example ?? whole));
  const query = params.filter((p) => p.in === 'query' && p.example !== undefined).map((p) => `${p.name}=${encodeURIComponent(p.example!)}`);
  return `${e.base}${path}${query.length ? `?${query.join('&')}` : ''}`;
}

function curl(doc: OpenApiDocument, e: Endpoint): string {
  const parts = ['curl'];
  // curl posts by itself when it sends a body.
  if (e.method !== 'get' && !(e.method === 'post' && e.op.requestBody)) parts.push(`-X ${e.method.toUpperCase()}`);
  for (const c of credentials(doc, e.op)) if (!c.optional && c.curl) parts.push(`-H "${c.name}: ${c.prefix}${c.curl}"`);
  const body = e.op.requestBody?.content ?? {};
  if (body['application/json']) parts.push(`-H 'content-type: application/json' -d '${JSON.stringify(body['application/json'].example ?? {})}'`);
  const form = body['multipart/form-data'];
  if (form) {
    parts.push('-F file=@skin.png');
    for (const [name, value] of Object.entries(form.example as Record<string, unknown> ?? {})) if (name !== 'file') parts.push(`-F ${name}=${value}`);
  }
  if (contentTypes(e.op).some((t) => t.startsWith('image/') || t === '*/*')) parts.push('-o out');
  return `${parts.join(' ')} '${example(e)}'`;
}

// Try-it fields carry data-name, never name: a form submitted natively (its script failed or never
// ran) sends no field, so a credential can never end up in a URL, a history entry or a log.
function input(text: Text, p: Parameter): string {
  const attrs = `data-name="${escapeHtml(p.name)}" data-in="${p.in}"${p.required ? ' required' : ''}`;
  const label = `${escapeHtml(p.name)}${p.required ? ' *' : ''}`;
  if (Array.isArray(p.schema.enum)) {
    const fallback = p.schema.default === undefined ? '' : ` (${escapeHtml(p.schema.default)})`;
    const options = p.schema.enum.map((v) => `<option${String(v) === String(p.example) ? ' selected' : ''}>${escapeHtml(v)}</option>`).join('');
    return `<label>${label} <select ${attrs}><option value="">${text.defaultOption}${fallback}</option>${options}</select></label>`;
  }
  const placeholder = p.schema.default !== undefined ? String(p.schema.default) : p.description;
  return `<label>${label} <input ${attrs} value="${escapeHtml(p.example ?? '')}" placeholder="${escapeHtml(placeholder)}" size="16"></label>`;
}

function credentialInput(c: Credential): string {
  // A credential is used for one request and never stored: no autocomplete, no storage.
  return `<label>${escapeHtml(c.name)}${c.optional ? '' : ' *'} <input type="password" autocomplete="off" data-name="${escapeHtml(c.name)}" data-in="${c.in}" data-prefix="${escapeHtml(c.prefix)}"${c.optional ? '' : ' required'} size="16"></label>`;
}

/** A try-it form for GET endpoints that answer data; pages and redirects get a plain link. */
function tryIt(text: Text, doc: OpenApiDocument, e: Endpoint): string {
  if (e.method !== 'get') return '';
  const types = contentTypes(e.op);
  if (successStatus(e.op) === '302' || (types.length === 1 && types[0] === 'text/html')) {
    return `<p><a href="${escapeHtml(example(e))}" target="_blank" rel="noopener">${text.open} ${escapeHtml(example(e))}</a></p>`;
  }
  const inputs = [...(e.op.parameters ?? []).map((p) => input(text, p)), ...credentials(doc, e.op).filter((c) => c.asked).map(credentialInput)].join(' ');
  // method="dialog": outside a <dialog> a native submit goes nowhere; the page's script sends it.
  return `<form class="try" method="dialog" data-base="${escapeHtml(e.base)}" data-path="${escapeHtml(e.path)}">${inputs}
<button class="button" type="submit">${text.tryIt}</button><div class="out"></div></form>`;
}

function requestBody(text: Text, doc: OpenApiDocument, e: Endpoint): string {
  const content = e.op.requestBody?.content;
  if (!content) return '';
  return Object.entries(content).map(([type, media]) => {
    const name = typeof media.schema.$ref === 'string' ? media.schema.$ref.split('/').pop()! : null;
    const ref = name ? ` (${text.schema} <a href="#schema-${escapeHtml(name)}">${escapeHtml(name)}</a>)` : '';
    const schema = name ? doc.components.schemas[name] : media.schema;
    const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
    const needed = (schema.required ?? []) as string[];
    const fields = Object.entries(properties).map(([field, f]) => ({ name: field, where: 'body', required: needed.includes(field), schema: f, description: String(f.description ?? '') }));
    const sample = media.example === undefined || !type.includes('json') ? '' : `<pre>${escapeHtml(JSON.stringify(media.example, null, 2))}</pre>`;
    return `<p>${text.body} <code>${escapeHtml(type)}</code>${ref}</p>${fieldTable(text, fields)}${sample}`;
  }).join('');
}

function responses(op: Operation): string {
  const items = Object.entries(op.responses).map(([status, r]) => {
    const types = Object.keys(r.content ?? {}).map((t) => `<code>${escapeHtml(t)}</code>`).join(' ');
    return `<li><b>${status}</b> ${prose(r.description)} ${types}</li>`;
  });
  return `<ul class="responses">${items.join('')}</ul>`;
}

function card(text: Text, doc: OpenApiDocument, e: Endpoint): string {
  const creds = credentials(doc, e.op);
  return `<div class="card endpoint" id="${escapeHtml(anchor(e))}">
<h3><span class="method ${e.method}">${e.method.toUpperCase()}</span> <code>${escapeHtml(e.path)}</code></h3>
<p>${prose(e.op.summary)}${e.op.description ? `. ${prose(e.op.description)}` : ''}</p>
${fieldTable(text, [...parameterFields(e.op.parameters ?? []), ...credentialFields(creds)])}${requestBody(text, doc, e)}${responses(e.op)}
<pre class="curl">${escapeHtml(curl(doc, e))}</pre>${tryIt(text, doc, e)}</div>`;
}

const STYLE = `<style>
body{max-width:1100px}
.endpoint h3{margin:.2rem 0;font-size:1.05rem}.method{display:inline-block;min-width:4rem;color:#fff;border-radius:4px;padding:0 .4rem;font-size:.85rem;text-align:center}
.method.get{background:#2d7d46}.method.post{background:#2d5bd3}.method.patch{background:#b7791f}.method.delete{background:#c53030}
table.params{font-size:.85rem;margin:.5rem 0}table.params th{border-bottom:1px solid #d9dde3}
pre{overflow-x:auto;white-space:pre-wrap;word-break:break-all}pre.answer{max-height:28rem;overflow-y:auto}.responses{font-size:.85rem;margin:.3rem 0}
form.try{border-top:1px dashed #d9dde3;padding-top:.5rem}form.try label{display:inline-block;margin:.15rem .6rem .15rem 0;font-size:.85rem}
.out img,.out video{max-width:100%;background:repeating-conic-gradient(#ddd 0 25%,#fff 0 50%) 0 0/16px 16px;margin-top:.4rem}
.toc{columns:2;font-size:.85rem}.toc a{text-decoration:none}
</style>`;

// Runs in the browser: builds the URL from the form, calls it and shows the answer by its type.
const script = (text: Text) => `<script>
// First, and on the document: whatever fails later in this script, a try-it form never submits itself.
document.addEventListener('submit', async (event) => {
  const form = event.target.closest('form.try');
  if (!form) return;
  event.preventDefault();
  const out = form.querySelector('.out');
  for (const media of out.querySelectorAll('img, video')) URL.revokeObjectURL(media.src);
  out.replaceChildren();
  let path = form.dataset.path;
  const query = new URLSearchParams();
  const headers = {};
  for (const field of form.querySelectorAll('input, select')) {
    if (!field.value) continue;
    const name = field.dataset.name;
    if (field.dataset.in === 'path') path = path.replace('{' + name + '}', encodeURIComponent(field.value));
    else if (field.dataset.in === 'header') headers[name] = (field.dataset.prefix || '') + field.value;
    else query.append(name, field.value);
  }
  const url = form.dataset.base + path + (query.size ? '?' + query : '');
  const line = document.createElement('div');
  const link = Object.assign(document.createElement('a'), { href: url, target: '_blank', rel: 'noopener', textContent: 'GET ' + url });
  line.append(link);
  out.append(line);
  try {
    const response = await fetch(url, { headers });
    const type = response.headers.get('content-type') || '';
    line.append(' → ' + response.status + ' ' + type);
    if (type.startsWith('image/') || type.startsWith('video/')) {
      const media = document.createElement(type.startsWith('image/') ? 'img' : 'video');
      media.className = 'answer-media';
      media.src = URL.createObjectURL(await response.blob());
      if (media.tagName === 'VIDEO') media.controls = true; else media.alt = 'answer';
      out.append(document.createElement('br'), media);
      return;
    }
    const body = await response.text();
    let shown = body;
    if (type.includes('json')) { try { shown = JSON.stringify(JSON.parse(body), null, 2); } catch {} }
    const pre = Object.assign(document.createElement('pre'), { className: 'answer', textContent: shown.slice(0, 20000) });
    out.append(pre);
  } catch (error) {
    line.append(' ' + ${scriptString(text.failed)} + ' ' + error);
  }
});
// A link to a schema opens its <details>; a hash that is no percent-encoding (#%) names nothing.
const openTarget = () => {
  let id;
  try { id = decodeURIComponent(location.hash.slice(1)); } catch { return; }
  const target = document.getElementById(id);
  if (target && target.tagName === 'DETAILS') target.open = true;
};
addEventListener('hashchange', openTarget);
openTarget();
</script>`;

function schemas(text: Text, doc: OpenApiDocument): string {
  const items = Object.entries(doc.components.schemas).map(([name, schema]) =>
    `<details id="schema-${escapeHtml(name)}"><summary><code>${escapeHtml(name)}</code></summary><pre>${escapeHtml(JSON.stringify(schema, null, 2))}</pre></details>`);
  return `<h2 id="schemas">${text.schemas}</h2>${items.join('')}`;
}

export function renderDocsPage(lang: Lang, doc: OpenApiDocument): string {
  const text = TEXT[lang];
  const services = doc.tags.map((tag) => ({ tag, list: endpoints(doc, tag.name) }));
  const toc = services.map(({ tag, list }) => `<h4><a href="#${tag.name}">${escapeHtml(tag.name)}</a></h4><ul>${list.map((e) =>
    `<li><a href="#${escapeHtml(anchor(e))}">${e.method.toUpperCase()} ${escapeHtml(e.path)}</a></li>`).join('')}</ul>`).join('');
  const sections = services.map(({ tag, list }) => {
    const base = doc.servers.find((s) => s['x-service'] === tag.name)?.url ?? '';
    return `<section id="${tag.name}"><h2>${escapeHtml(tag.name)} ${text.service} <small><code>${escapeHtml(base)}</code></small></h2>
<p>${prose(tag.description)}</p>${list.map((e) => card(text, doc, e)).join('')}</section>`;
  }).join('');
  // The document's own summary is English; the Chinese page says so instead of repeating it.
  const summary = lang === 'en' ? escapeHtml(doc.info.description) : text.note;
  const intro = `<p>${summary} ${text.machine} <a href="/openapi.json">/openapi.json</a> (OpenAPI ${escapeHtml(doc.openapi)}, ${text.version} ${escapeHtml(doc.info.version)}).</p>`;
  return layout(lang, text.title, `${STYLE}<h2>API</h2>${intro}<nav class="card toc">${toc}<h4><a href="#schemas">${text.schemas}</a></h4></nav>${sections}${schemas(text, doc)}${script(text)}`);
}
