// GET /docs: the OpenAPI document for people, in the viewer the service bundles (api/docs/viewer.ts):
// operations grouped by service, a search box, and try-it on every operation. Our frame around it
// (header, intro) is in the reader's language; the viewer and the descriptions are English.
import { html } from '../http/html.ts';
import type { Lang } from '../http/i18n.ts';
import { page, STYLE_SOURCE, type PageFrame } from '../http/page.ts';
import type { OpenApiDocument } from './openapi-types.ts';

const TEXT = {
  en: { title: 'API docs', machine: 'Machine-readable:', version: 'version', note: '', script: 'The API viewer needs JavaScript; the description itself is at' },
  zh: {
    title: 'API 文档', machine: '机器可读：', version: '版本', note: '各接口的说明取自 OpenAPI 文档（英文）。',
    script: 'API 查看器需要 JavaScript；接口描述本身见',
  },
} satisfies Record<Lang, Record<string, string>>;

const ASSETS = '/docs/assets';

/** Where the viewer sends try-it requests: the services' own addresses (the document's servers). */
const origins = (doc: OpenApiDocument) => [...new Set(doc.servers.map((s) => new URL(s.url).origin))];

/**
 * The page's Content-Security-Policy: scripts and styles only from this service (Swagger UI sets
 * its inline styles through the DOM, which style-src does not restrict), requests only to this
 * service and the documented servers, images from answers (blob:) and the stylesheets (data:).
 */
export function docsPolicy(doc: OpenApiDocument): string {
  return [
    "default-src 'none'", "script-src 'self'", `style-src 'self' ${STYLE_SOURCE}`, "img-src 'self' data: blob:", "font-src 'self' data:",
    `connect-src 'self' ${origins(doc).join(' ')}`, "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
  ].join('; ');
}

export function renderDocsPage(frame: PageFrame, doc: OpenApiDocument): string {
  const text = TEXT[frame.lang];
  // The document's own summary is English; the Chinese page says so instead of repeating it.
  const summary = frame.lang === 'en' ? doc.info.description : text.note;
  const head = html`<link rel="stylesheet" href="${ASSETS}/swagger-ui.css">
<script src="${ASSETS}/swagger-ui-bundle.js" defer></script><script src="${ASSETS}/viewer.js" defer></script>`;
  return page(frame, `${text.title} · Skinfarm`, html`<h1>${text.title}</h1>
<p>${summary} ${text.machine} <a href="/openapi.json">/openapi.json</a> (OpenAPI ${doc.openapi}, ${text.version} ${doc.info.version}).</p>
<div id="api-viewer" data-document="/openapi.json"></div>
<noscript><p>${text.script} <a href="/openapi.json">/openapi.json</a>.</p></noscript>`, { head, section: 'docs' });
}
