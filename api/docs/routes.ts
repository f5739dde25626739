// GET /openapi.json and GET /docs on the skins service.
import Router from '@koa/router';
import type { Config } from '../config.ts';
import { renderDocsPage } from './docs-page.ts';
import { buildOpenApi, type OpenApiDocument } from './openapi.ts';

export function docsRouter(config: Config): Router {
  const router = new Router();
  // Built on first use and again only if PUBLIC_URL changes (a port 0 is known after listen).
  let built: { publicUrl: string; doc: OpenApiDocument; html: string } | null = null;
  const current = () => {
    if (built?.publicUrl !== config.publicUrl) {
      const doc = buildOpenApi(config);
      built = { publicUrl: config.publicUrl, doc, html: renderDocsPage(doc) };
    }
    return built;
  };

  router.get('/openapi.json', (ctx) => {
    ctx.body = current().doc;
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'html';
    ctx.body = current().html;
  });
  return router;
}
