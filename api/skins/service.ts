// Composition of the skins service: upstream clients, lookup, textures and the Koa app, with the
// document of all three services that the composition root hands it (`docs`).
import type { RequestListener } from 'node:http';
import type Koa from 'koa';
import type { Config } from '../config.ts';
import type { Cache } from '../cache.ts';
import { createHttpApp, type AppState } from '../http/app.ts';
import { errorEnvelope } from '../http/envelope.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import { ApiError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import type { Service, SharedDeps } from '../service.ts';
import { ExternalInfo } from './external-info.ts';
import { ExternalAccount } from './account/external-account.ts';
import { AccountContext } from './account/routes.ts';
import { PendingLogins } from './account/pending-login.ts';
import { Sessions } from './account/session.ts';
import { MemorySessionStore, RedisSessionStore } from './account/session-store.ts';
import type { Farm } from '../../renderer/farm.ts';
import { gaugeFrom } from '../metrics.ts';
import { hotImages } from './hot-images.ts';
import { ImageRenderer } from './images.ts';
import { RenderLock } from './render-lock.ts';
import type { DocsSource } from '../docs/routes.ts';
import { SKINS_SECTIONS } from './routes.ts';
import { floodgateUuid } from './upstream/floodgate.ts';
import { TextureStore, OFFICIAL_TEXTURE_HOST } from './texture-store.ts';
import { publicSkinDomain, TextureFetcher } from './textures.ts';
import type { PlayerLookup } from './lookup.ts';
import type { UpstreamBudgets } from './upstream/budget.ts';
import { UpstreamClient } from './upstream/client.ts';
import { farmCheck, imageLibraryCheck, upstreamCheck } from './readiness-checks.ts';
import { SourceHealth } from './upstream/health.ts';
import { VERSION } from '../version.ts';



/** `docs`: /openapi.json and /docs, which describe every service (the composition root has their tables). */
export async function createSkinsService(deps: SharedDeps, docs: DocsSource): Promise<SkinsService> {
  const farm = await createFarm(deps);
  if (farm) {
    gaugeFrom('skinfarm_render_queue_depth', 'Render jobs waiting for a page (with RENDER_QUEUE_URL: in the broker\'s queue)', () => farm.stats().queued);
    gaugeFrom('skinfarm_render_running', 'Render batches in progress (with RENDER_QUEUE_URL: jobs this instance waits for)', () => farm.stats().running);
    gaugeFrom('skinfarm_render_pages_alive', 'Chromium pages able to render (with RENDER_QUEUE_URL: on every render node)', () => farm.stats().pagesAlive);
    gaugeFrom('skinfarm_render_browser_restarts', 'Chromium restarts since start', () => farm.stats().browserRestarts);
    gaugeFrom('skinfarm_render_context_losses', 'Render pages replaced since start because their WebGL context or GPU process was lost', () => farm.stats().contextLosses);
    gaugeFrom('skinfarm_render_watchdog_restarts', 'Times every Chromium was restarted because render batches kept timing out', () => farm.stats().watchdogRestarts);
    gaugeFrom('skinfarm_render_up', 'Whether the render farm draws: 1 ok, 0.5 degraded, 0 down (cannot draw)', () => ({ ok: 1, degraded: 0.5, down: 0 })[farm.health().state]);
    gaugeFrom('skinfarm_render_self_check_failures', 'Fresh render pages that failed their known-answer render since start (their browser was replaced)', () => farm.stats().selfCheckFailures);
  }
  const remote = farm?.remote?.bind(farm);
  if (remote) {
    // What an autoscaler reads: nodes, the queue's depth and how long jobs wait.
    gaugeFrom('skinfarm_render_nodes', 'Render nodes that reported themselves in the last 6 s', () => remote().nodes.length);
    gaugeFrom('skinfarm_render_nodes_gpu', 'Of them, nodes drawing on a GPU', () => remote().nodes.filter((n) => n.info.gpu).length);
    gaugeFrom('skinfarm_render_queue_consumers', 'Consumers on the render queue (one per render node)', () => remote().queue.consumers);
    gaugeFrom('skinfarm_render_broker_up', 'Whether this instance is connected to the render queue broker', () => Number(remote().connected));
    gaugeFrom('skinfarm_render_pending', 'Render jobs this instance waits for', () => remote().pending);
    gaugeFrom('skinfarm_render_oldest_pending_seconds', 'Age of the oldest render job this instance waits for', () => remote().oldestPendingMs / 1000);
    gaugeFrom('skinfarm_render_queue_wait_seconds', 'Longest time a job waited in the queue before a node took it, as the nodes reported it last', () => Math.max(0, ...remote().nodes.map((n) => n.queueWaitMs)) / 1000);
  }
  return new SkinsService(deps, farm, docs);
}

/**
 * The farm this instance renders with: render nodes over the broker with RENDER_QUEUE_URL (no
 * browser here), else pages in this process, or none with RENDER_WORKERS=0.
 */
async function createFarm({ config, log, stopping }: SharedDeps): Promise<Farm | null> {
  const { queueUrl, ...render } = config.render;
  if (queueUrl) {
    const { RemoteFarm } = await import('../../renderer/queue/remote-farm.ts');
    return RemoteFarm.create({ url: queueUrl, jobTimeoutMs: render.jobTimeoutMs, queueLimit: render.queueLimit }, log.child({ component: 'render-queue' }));
  }
  if (render.workers === 0) return null;
  const { RenderFarm } = await import('../../renderer/farm.ts');
  return RenderFarm.create(render, log.child({ component: 'renderer' }), stopping);
}

/** A flat object with its camelCase keys written in snake_case (JSON answers use one style). */
export function snakeCaseKeys(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));
}

export class SkinsService implements Service {
  readonly config: Config;
  readonly log: Logger;
  readonly cache: Cache;
  readonly limiter: RateLimiter;
  readonly lookup: PlayerLookup;
  readonly externalInfo: ExternalInfo;
  readonly textures: TextureStore;
  readonly textureHealth: SourceHealth;
  readonly budgets: UpstreamBudgets;
  readonly app: Koa<AppState>;
  readonly images: ImageRenderer;
  readonly farm: Farm | null;
  private readonly startedAt = Date.now();
  private lastProbe: { at: number; result: ReturnType<SkinsService['probe']> } | null = null;

  constructor(deps: SharedDeps, farm: Farm | null, docs: DocsSource) {
    const { config, log, cache } = deps;
    this.farm = farm;
    this.config = config;
    this.log = log;
    this.cache = cache;
    this.limiter = deps.limiter;
    const { lookup, budgets, clientOptions } = deps.upstreams;
    this.budgets = budgets;
    this.lookup = lookup;
    const external = lookup.sources.external;
    this.externalInfo = new ExternalInfo(external, cache);
    this.textureHealth = new SourceHealth('textures', true);
    const fetcher = new TextureFetcher(new UpstreamClient(this.textureHealth, clientOptions), () => this.textureHosts(), config.upstream.textureMaxBytes, config.textureHosts === null);
    this.textures = new TextureStore(fetcher, cache);
    this.images = new ImageRenderer(this.textures, cache, () => this.farm, new RenderLock(deps.redis));

    const { clientId, clientSecret, redirectUrl, scopes, clientAuth } = config.oauth;
    const account = clientId && clientSecret && redirectUrl
      ? new ExternalAccount(external.client, config.external, { clientId, clientSecret, redirectUrl, scopes, clientAuth })
      : null;

    const { app, routes } = createHttpApp({ service: 'skins', log, config, formatError: errorEnvelope, readiness: deps.readiness, limiter: deps.limiter });
    this.app = app;
    deps.readiness.add(farmCheck(() => this.farm));
    deps.readiness.add(imageLibraryCheck());
    const { official, bedrock } = lookup.sources;
    for (const health of [official.client.health, external.client.health, bedrock.client.health, this.textureHealth]) deps.readiness.add(upstreamCheck(health));
    const secure = config.publicUrl.startsWith('https:');
    if (secure) {
      // TLS ends at the proxy in front of us; the cookie must still be marked Secure.
      this.app.use(async (ctx, next) => {
        ctx.cookies.secure = true;
        await next();
      });
    }
    const store = deps.redis ? new RedisSessionStore(deps.redis, log) : new MemorySessionStore();
    const sessions = new Sessions(this.app, store, { secret: config.sessionSecret, secure });
    const accountDeps = { account, sessions, pending: new PendingLogins({ secure }), issuer: config.oauth.issuer, lock: new RenderLock(deps.redis) };
    const parts = { service: this, account: new AccountContext(this, accountDeps), pages: { service: this, oauthConfigured: account !== null, sessions }, docs };
    for (const part of SKINS_SECTIONS) routes.mount(part.router(parts, deps));
  }

  /**
   * TEXTURE_HOSTS when set; else the official texture host plus the external skinDomains that are
   * public host names (publicSkinDomain: no IP literal, no loopback or private name).
   */
  async textureHosts(): Promise<string[]> {
    if (this.config.textureHosts) return this.config.textureHosts;
    if (!this.config.external.enabled) return [OFFICIAL_TEXTURE_HOST];
    try {
      const meta = await this.externalInfo.metadata();
      return [OFFICIAL_TEXTURE_HOST, ...meta.skinDomains.flatMap((d) => publicSkinDomain(d) ?? [])];
    } catch {
      return [OFFICIAL_TEXTURE_HOST];
    }
  }

  /** Hot cached images are answered in front of the Koa stack; everything else by the app. */
  handler(): RequestListener {
    return hotImages(this, this.app.callback());
  }

  async close(): Promise<void> {
    await this.farm?.close();
  }

  async trim(): Promise<void> {
    this.images.trim();
    await this.farm?.trim();
  }

  sourceList() {
    const { official, external, bedrock } = this.lookup.sources;
    return [official, external, bedrock].map((s) => ({ id: s.id, label: s.label, enabled: this.lookup.sources.isEnabled(s.id) }));
  }

  /**
   * Asks each enabled source one cheap question (official: a name lookup, external: its
   * metadata, bedrock: the skin of XUID 1, which asks Xbox Live nothing) and reports
   * reachability; shared by concurrent callers and reused for 10 s.
   */
  probe(): Promise<Record<string, { ok: boolean; ms: number; error: string | null }>> {
    if (this.lastProbe && Date.now() - this.lastProbe.at < 10_000) return this.lastProbe.result;
    const timed = async (enabled: boolean, fn: () => Promise<unknown>) => {
      if (!enabled) return { ok: false, ms: 0, error: 'disabled' };
      const started = performance.now();
      try {
        await fn();
        return { ok: true, ms: Math.round(performance.now() - started), error: null };
      } catch (error) {
        return { ok: false, ms: Math.round(performance.now() - started), error: error instanceof ApiError ? error.code : 'internal_error' };
      }
    };
    const { official, external, bedrock } = this.lookup.sources;
    const result = Promise.all([
      timed(this.config.official.enabled, () => official.nameToId(this.config.demoPlayer.slice(0, 16))),
      timed(this.config.external.enabled, () => external.metadata()),
      timed(this.config.bedrock.enabled, () => bedrock.profile(floodgateUuid(1))),
    ]).then(([o, e, b]) => ({ official: o, external: e, bedrock: b }));
    this.lastProbe = { at: Date.now(), result };
    return result;
  }

  /** With RENDER_QUEUE_URL: the broker, its queue and the render nodes, in the answers' snake_case. */
  private remoteStatus() {
    const remote = this.farm?.remote?.();
    if (!remote) return {};
    return {
      broker_connected: remote.connected,
      queue: snakeCaseKeys(remote.queue),
      pending: remote.pending,
      oldest_pending_ms: remote.oldestPendingMs,
      ignored_answers: remote.ignoredAnswers,
      nodes: remote.nodes.map(({ info, stats, jobs, ...node }) => ({ ...snakeCaseKeys(node), info: snakeCaseKeys({ ...info }), stats: snakeCaseKeys({ ...stats }), jobs })),
    };
  }

  /** Local state only: no upstream is asked. */
  async status() {
    const { official, external, bedrock } = this.lookup.sources;
    const cache = await this.cache.stats();
    return {
      version: VERSION,
      uptime_ms: Date.now() - this.startedAt,
      cache,
      sources: {
        official: official.client.health.snapshot(),
        external: external.client.health.snapshot(),
        bedrock: bedrock.client.health.snapshot(),
      },
      textures: this.textureHealth.snapshot(),
      upstream_budgets: this.budgets.snapshot(),
      rate_limited: this.limiter.limitedTotal,
      // The farm's own camelCase, in the API's snake_case.
      render: this.farm ? { ...snakeCaseKeys({ ...this.farm.stats(), ...this.farm.info(), ...this.farm.health() }), ...this.remoteStatus() } : { workers: 0 },
    };
  }
}
