// GET /openapi.json and GET /docs on the skins service, over a source of the built document
// (api/docs/served.ts), so that the document can list these routes without importing itself.
import type { Context } from 'koa';
import { pageLanguage, type Lang } from '../http/i18n.ts';
import type { Route } from '../http/route-table.ts';
import { html, json } from './fragments.ts';
import type { OpenApiDocument } from './openapi.ts';

export interface DocsSource { document(): OpenApiDocument; page(lang: Lang): string }

export const DOCS_ROUTES: Route<DocsSource>[] = [
  {
    method: 'get', path: '/docs', doc: { summary: 'This documentation (HTML)', ok: html('the page') },
    handle: (ctx: Context, docs) => {
      ctx.type = 'html';
      ctx.body = docs.page(pageLanguage(ctx));
    },
  },
  {
    method: 'get', path: '/openapi.json', doc: { summary: 'This description (OpenAPI 3.1)', ok: json('the document', { type: 'object' }) },
    handle: (ctx: Context, docs) => {
      ctx.body = docs.document();
    },
  },
];
