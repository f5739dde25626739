// HTML pages of the skins service, the upstream probe the status page's button calls, and
// /health (the same idea as media's and search's: cheap, local, no upstream call).
import type { Context } from 'koa';
import { ok } from '../../http/envelope.ts';
import { pageFrame } from '../../http/page.ts';
import type { Route } from '../../http/route-table.ts';
import { data, html, pretty } from '../../docs/fragments.ts';
import { HEALTH_DOC, ROOT_DOC } from '../../docs/shared-routes.ts';
import type { Sessions } from '../account/session.ts';
import { VERSION } from '../../version.ts';
import { imageLibrary } from '../readiness-checks.ts';
import { RATE_GROUPS } from '../route-params.ts';
import type { SkinsService } from '../service.ts';
import { renderLanding } from './landing.ts';
import { renderStatusPage } from './status.ts';

export interface PagesDeps { service: SkinsService; oauthConfigured: boolean; sessions: Sessions }

async function landing(ctx: Context, { service, sessions, oauthConfigured }: PagesDeps): Promise<void> {
  const user = (await sessions.load(ctx))?.data.user;
  ctx.type = 'html';
  ctx.body = renderLanding(pageFrame(ctx, service.config, 'skins'), { demoPlayer: service.config.demoPlayer, user: user ?? null, oauthConfigured });
}

async function statusPage(ctx: Context, { service }: PagesDeps): Promise<void> {
  const started = process.hrtime.bigint();
  const status = await service.status();
  ctx.type = 'html';
  ctx.body = renderStatusPage(pageFrame(ctx, service.config, 'skins'), {
    version: status.version,
    uptimeMs: status.uptime_ms,
    responseMs: Number(process.hrtime.bigint() - started) / 1e6,
    cache: status.cache,
    // Texture downloads are a source too: images fail when their host does.
    sources: { ...status.sources, textures: status.textures },
    render: service.farm ? { ...service.farm.stats(), ...service.farm.info(), ...service.farm.health() } : null,
    imageLibrary: await imageLibrary(),
  });
}

function health(ctx: Context, { service }: PagesDeps): void {
  const farm = service.farm?.stats();
  ctx.body = {
    status: 'ok',
    service: 'skins',
    version: VERSION,
    uptime_s: Math.round(process.uptime()),
    render: { workers: farm?.workers ?? 0, pages_alive: farm?.pagesAlive ?? 0 },
  };
}

export const PAGE_ROUTES: Route<PagesDeps>[] = [
  // Both pages show this moment's state (the login, the counters): nothing may keep them.
  { method: 'get', path: '/', cacheControl: 'no-store', handle: landing, doc: ROOT_DOC },
  { method: 'get', path: '/status', cacheControl: 'no-store', handle: statusPage, doc: { summary: 'Status page (HTML)', description: 'Probes upstreams only when its button is pressed.', ok: html('the page') } },
  { method: 'get', path: '/health', handle: health, doc: HEALTH_DOC },
  {
    method: 'get', path: '/v1/status/probe', limit: RATE_GROUPS.normal, params: [pretty], handle: async (ctx, { service }) => ok(ctx, await service.probe()),
    doc: { summary: 'Probe the upstreams', description: 'One cheap question to each enabled source; shared by concurrent callers and reused for 10 s.', ok: data('reachability per source', 'Probe') },
  },
  {
    // Browsers ask for it on every page; an empty answer keeps their consoles clean.
    method: 'get', path: '/favicon.ico', cacheControl: 'public, max-age=86400',
    handle: (ctx) => {
      ctx.status = 204;
    },
    doc: { summary: 'No icon', description: 'An empty answer browsers may cache for a day.', status: '204', ok: { description: 'no content' } },
  },
];
