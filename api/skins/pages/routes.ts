// HTML pages of the skins service, the upstream probe the status page's button calls, and
// /health (the same idea as media's and search's: cheap, local, no upstream call).
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { ok } from '../../http/envelope.ts';
import { pageLanguage } from '../../http/i18n.ts';
import type { Sessions } from '../account/session.ts';
import { VERSION } from '../../version.ts';
import type { SkinsService } from '../service.ts';
import { renderLanding } from './landing.ts';
import { renderStatusPage } from './status.ts';

export function pagesRouter(service: SkinsService, oauthConfigured: boolean, sessions: Sessions, limit: Middleware): Router {
  const router = new Router();

  router.get('/', async (ctx) => {
    const user = (await sessions.load(ctx))?.data.user;
    ctx.type = 'html';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = renderLanding(pageLanguage(ctx), { demoPlayer: service.config.demoPlayer, user: user ?? null, oauthConfigured });
  });

  router.get('/status', async (ctx) => {
    const started = process.hrtime.bigint();
    const status = await service.status();
    ctx.type = 'html';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = renderStatusPage(pageLanguage(ctx), {
      version: status.version,
      uptimeMs: status.uptime_ms,
      responseMs: Number(process.hrtime.bigint() - started) / 1e6,
      cache: status.cache,
      sources: status.sources,
    });
  });

  router.get('/health', (ctx) => {
    const farm = service.farm?.stats();
    ctx.body = {
      status: 'ok',
      service: 'skins',
      version: VERSION,
      uptime_s: Math.round(process.uptime()),
      render: { workers: farm?.workers ?? 0, pages_alive: farm?.pagesAlive ?? 0 },
    };
  });

  router.get('/v1/status/probe', limit, async (ctx) => ok(ctx, await service.probe()));

  // Browsers ask for it on every page; an empty answer keeps their consoles clean.
  router.get('/favicon.ico', (ctx) => {
    ctx.status = 204;
    ctx.set('Cache-Control', 'public, max-age=86400');
  });

  return router;
}
