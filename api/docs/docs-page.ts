// GET /docs: the OpenAPI document for people, in the viewer the service bundles (api/docs/viewer.ts):
// operations grouped by service, a search box, and try-it on every operation. Our frame around it
// (header, intro) is in the reader's language; the viewer and the descriptions are English.
import { html } from '../http/html.ts';
import type { Lang } from '../http/i18n.ts';
import { page, STYLE_SOURCE, type PageFrame } from '../http/page.ts';
import type { OpenApiDocument } from './openapi-types.ts';

// What the services are and how to try one: the document's own conventions (shared answers,
// statuses) are for those who write clients against it, in docs/openapi.md.
const TEXT = {
  en: {
    title: 'API docs',
    intro: 'Skinfarm answers over HTTP from three services: skins (Minecraft player lookups, skin and cape images, 3D renders and turntables), media (a random file of a category) and search. Every operation of the three is listed below by service.',
    tryIt: 'To try one: open it, press “Try it out”, fill in its parameters (a demo player is already filled in) and press “Execute”: the request goes to that operation\'s own service and its answer, status and headers show below it, with the same request as a curl command.',
    machine: 'This page is Swagger UI over the OpenAPI document. Machine-readable:', version: 'version', script: 'The API viewer needs JavaScript; the description itself is at',
  },
  zh: {
    title: 'API 文档',
    intro: 'Skinfarm 通过三个 HTTP 服务提供接口：皮肤（Minecraft 玩家查询、皮肤与披风图像、3D 渲染与转盘动画）、媒体（按分类随机返回文件）与搜索。下面按服务列出全部接口，说明为英文。',
    tryIt: '试用方法：展开一个接口，点击 “Try it out”，填写参数（已预填示例玩家），再点击 “Execute”：请求发往该接口所属的服务，下方显示回答、状态码与响应头，以及同一请求的 curl 命令。',
    machine: '本页是基于 OpenAPI 文档的 Swagger UI。机器可读：', version: '版本', script: 'API 查看器需要 JavaScript；接口描述本身见',
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
  const head = html`<link rel="stylesheet" href="${ASSETS}/swagger-ui.css">
<script src="${ASSETS}/swagger-ui-bundle.js" defer></script><script src="${ASSETS}/viewer.js" defer></script>`;
  return page(frame, `${text.title} · Skinfarm`, html`<h1>${text.title}</h1>
<p>${text.intro}</p>
<p>${text.tryIt}</p>
<p>${text.machine} <a href="/openapi.json">/openapi.json</a> (OpenAPI ${doc.openapi}, ${text.version} ${doc.info.version}).</p>
<div id="api-viewer" data-document="/openapi.json"></div>
<noscript><p>${text.script} <a href="/openapi.json">/openapi.json</a>.</p></noscript>`, { head, section: 'docs' });
}
