// GET /openapi.json, GET /docs and the viewer's files on the skins service, over a source of the
// built document that the composition root hands the service (api/docs/served.ts), so that the
// document can list these routes and no service imports the others' tables.
import type { Context } from 'koa';
import { inPath, text } from '../http/params.ts';
import { pageFrame, type PageFrame, type SiteAddresses } from '../http/page.ts';
import type { Route } from '../http/route-table.ts';
import { html, json } from './fragments.ts';
import { sendPrebuilt, type Prebuilt } from './prebuilt.ts';
import { ASSET_NAMES, ASSET_TYPES, sendAsset } from './viewer.ts';

export interface DocsSource {
  site: SiteAddresses;
  /** The document as served: compact JSON, its ETag and gzip form. */
  file(): Prebuilt;
  page(frame: PageFrame): string;
  /** The Content-Security-Policy of the page. */
  policy(): string;
}

export const DOCS_ROUTES: Route<DocsSource>[] = [
  {
    method: 'get', path: '/docs',
    doc: { summary: 'This documentation (HTML)', description: 'The document below in Swagger UI, bundled with the service (it works offline), with try-it on every operation.', ok: html('the page') },
    handle: (ctx: Context, docs) => {
      ctx.type = 'html';
      ctx.set('Content-Security-Policy', docs.policy());
      ctx.body = docs.page(pageFrame(ctx, docs.site, 'skins'));
    },
  },
  {
    // Revalidated on each use: a new version is seen at once, an unchanged one is a 304.
    method: 'get', path: '/docs/assets/{file}', cacheControl: 'no-cache',
    params: [inPath('file', `one of ${ASSET_NAMES.join(', ')}`, text, { example: 'viewer.js' })],
    handle: (ctx, _docs, params) => sendAsset(ctx, params.file as string),
    doc: {
      summary: 'A file of the API viewer',
      description: 'Swagger UI (swagger-ui-dist, Apache-2.0) and the script that starts it, from the service itself. gzip when accepted; revalidated with the ETag on each use.',
      ok: { description: 'the file', content: Object.fromEntries(ASSET_TYPES.map((type) => [type, { schema: text }])) },
      conditional: true,
      errors: ['route_not_found'],
    },
  },
  {
    // Revalidated on each use, as the viewer's files: built once, a 304 costs nothing.
    method: 'get', path: '/openapi.json', cacheControl: 'no-cache',
    doc: { summary: 'This description (OpenAPI 3.1)', description: 'Compact JSON, gzip when accepted; revalidated with the ETag on each use.', ok: json('the document', { type: 'object' }), conditional: true },
    handle: (ctx: Context, docs) => sendPrebuilt(ctx, docs.file()),
  },
];
