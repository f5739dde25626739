// GET /openapi.json and GET /docs on the skins service.
import Router from '@koa/router';
import type { Config } from '../config.ts';
import { pageLanguage, type Lang } from '../http/i18n.ts';
import { renderDocsPage } from './docs-page.ts';
import { buildOpenApi, type OpenApiDocument } from './openapi.ts';

export function docsRouter(config: Config): Router {
  const router = new Router();
  // Built on first use and again only if PUBLIC_URL changes (a port 0 is known after listen);
  // the page once per language.
  let built: { publicUrl: string; doc: OpenApiDocument; html: Partial<Record<Lang, string>> } | null = null;
  const current = () => {
    if (built?.publicUrl !== config.publicUrl) built = { publicUrl: config.publicUrl, doc: buildOpenApi(config), html: {} };
    return built;
  };

  router.get('/openapi.json', (ctx) => {
    ctx.body = current().doc;
  });
  router.get('/docs', (ctx) => {
    const lang = pageLanguage(ctx);
    const { doc, html } = current();
    ctx.type = 'html';
    ctx.body = html[lang] ??= renderDocsPage(lang, doc);
  });
  return router;
}
