// A real HTTP fake of every upstream path the project calls (docs/upstream.md), for
// development, demos and tests. One node:http server; see docs/fake-upstream.md.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { bedrockRoutes } from './bedrock.ts';
import { externalRoutes } from './external.ts';
import { BodyTooLarge, findRoute, parseJson, readBody, sendEmpty, sendJson } from './http.ts';
import { signingKey } from './keys.ts';
import { DEFAULT_OAUTH, OAuthProvider, oauthRoutes, type OAuthOptions } from './oauth.ts';
import { officialError, officialRoutes } from './official.ts';
import { PlayerCatalogue, type Source } from './players.ts';
import { sessionProfile } from './profiles.ts';
import type { AnswerKnobs, FakeContext, FakeRoute, FakeState } from './state.ts';
import { textureRoutes } from './texture-routes.ts';
import { textureBase } from './textures.ts';

export type { FakePlayer, FakeUser, Source } from './players.ts';
export { BEDROCK_PLAYERS, type BedrockPlayer } from './bedrock.ts';
export type { OAuthOptions } from './oauth.ts';
export { PlayerCatalogue } from './players.ts';

export interface FakeUpstreamOptions {
  port?: number;
  host?: string;
  latencyMs?: number;
  oauth?: OAuthOptions;
  /** Knobs set before the fake listens (what a service reads once at start, e.g. the external metadata). */
  control?: FakeControl;
}

export interface FakeControl {
  /** Delay before every answer. */
  latencyMs?: number;
  /** After this many more official API calls (textures excluded), answer 429 until reset; null lifts it. */
  officialBudget?: number | null;
  /** 500 on every path of that source. */
  down?: Partial<Record<Upstream, boolean>>;
  /** Every request to that source hangs until close. */
  hang?: Partial<Record<Upstream, boolean>>;
  /** GeyserMC's XUID -> gamertag answers this gamertag for every known XUID (a hostile upstream); null: the real ones. */
  bedrockGamertag?: string | null;
  /** The external metadata's `skinDomains` and the host its texture URLs are written with; null: the fake's own. */
  external?: { skinDomains?: string[] | null; textureHost?: string | null };
}

export interface RequestRecord { route: string; method: string; path: string; body?: string }

export interface FakeUpstream {
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  /** OFFICIAL_API_URL, OFFICIAL_SERVICES_URL, OFFICIAL_SESSION_URL, EXTERNAL_URL, EXTERNAL_YGGDRASIL_URL, BEDROCK_API_URL, BEDROCK_TEXTURE_URL, OFFICIAL_TEXTURE_URL, TEXTURE_HOSTS. */
  env: Record<string, string>;
  /** Requests by route key since the last reset. */
  calls(): Record<string, number>;
  /** Every request since the last reset (the newest 10,000). */
  requests(): RequestRecord[];
  /** Clears counters, the request log and the budget used; control knobs stay. */
  resetCalls(): void;
  control(c: FakeControl): void;
  players: PlayerCatalogue;
  /** SPKI PEMs that verify the signed textures properties. */
  publicKeys(): Promise<Record<Source, string>>;
  /**
   * Builds the signed profiles and textures of gen_0 .. gen_{count-1} of a source ahead, as a
   * load test's first requests would: the fake's own work is then done before the clock starts.
   */
  prepareGenerated(count: number, source?: Source): Promise<void>;
  /** Stops the server; hanging and delayed requests are cut off. */
  close(): Promise<void>;
}

const ROUTES: FakeRoute[] = [...officialRoutes, ...externalRoutes, ...bedrockRoutes, ...oauthRoutes, ...textureRoutes];
const MAX_BODY_BYTES = 1024 * 1024;
const MAX_LOG = 10_000;

/** The upstreams the fake plays: the players' two sources and GeyserMC's Global API. */
export type Upstream = Source | 'bedrock';

interface Knobs { latencyMs: number; officialBudget: number | null; down: Record<Upstream, boolean>; hang: Record<Upstream, boolean>; answers: AnswerKnobs }

function sourceOf(path: string): Upstream | null {
  if (path.startsWith('/official/')) return 'official';
  if (path.startsWith('/external/')) return 'external';
  if (path.startsWith('/bedrock/')) return 'bedrock';
  return null;
}

export async function startFakeUpstream(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const host = options.host ?? '127.0.0.1';
  const knobs: Knobs = {
    latencyMs: options.latencyMs ?? 0,
    officialBudget: null,
    down: { official: false, external: false, bedrock: false },
    hang: { official: false, external: false, bedrock: false },
    answers: { bedrockGamertag: null, skinDomains: null, externalTextureHost: null },
  };
  let counters: Record<string, number> = {};
  let log: RequestRecord[] = [];
  let officialUsed = 0;
  const hanging = new Set<ServerResponse>();
  const closing = new AbortController();
  let closed = Promise.resolve();

  const control = (c: FakeControl) => {
    if (c.latencyMs !== undefined) knobs.latencyMs = c.latencyMs;
    if (c.officialBudget !== undefined) {
      knobs.officialBudget = c.officialBudget;
      officialUsed = 0;
    }
    Object.assign(knobs.down, c.down);
    Object.assign(knobs.hang, c.hang);
    if (c.bedrockGamertag !== undefined) knobs.answers.bedrockGamertag = c.bedrockGamertag;
    if (c.external?.skinDomains !== undefined) knobs.answers.skinDomains = c.external.skinDomains;
    if (c.external?.textureHost !== undefined) knobs.answers.externalTextureHost = c.external.textureHost;
  };
  if (options.control) control(options.control);
  const resetCalls = () => {
    counters = {};
    log = [];
    officialUsed = 0;
  };
  const record = (entry: RequestRecord) => {
    counters[entry.route] = (counters[entry.route] ?? 0) + 1;
    log.push(entry);
    if (log.length > MAX_LOG) log.shift();
  };

  /** Out-of-process access to the same controls; these requests are not counted. */
  const admin: Record<string, (body: string, res: ServerResponse) => void> = {
    'GET /__calls': (_, res) => sendJson(res, 200, counters),
    'GET /__requests': (_, res) => sendJson(res, 200, log),
    'POST /__reset': (_, res) => {
      resetCalls();
      sendEmpty(res, 204);
    },
    'POST /__control': (body, res) => {
      const c = parseJson(body);
      if (typeof c !== 'object' || c === null || Array.isArray(c)) return sendJson(res, 400, { error: 'expected a JSON FakeControl object' });
      control(c as FakeControl);
      sendJson(res, 200, knobs);
    },
  };

  /** Knob-driven answers that pre-empt the route; true when one was given. */
  const interfere = (ctx: FakeContext, source: Upstream | null, key: string): boolean => {
    if (!source) return false;
    if (knobs.hang[source]) {
      ctx.hang();
      return true;
    }
    if (knobs.down[source]) {
      if (source === 'official') officialError(ctx, 500, 'InternalServerError', 'Internal Server Error');
      else sendJson(ctx.res, 500, { message: 'Server Error' });
      return true;
    }
    // Textures come from a CDN that the API's rate limit does not cover.
    if (source === 'official' && key !== 'official.texture' && knobs.officialBudget !== null && ++officialUsed > knobs.officialBudget) {
      officialError(ctx, 429, 'TooManyRequestsException', 'The client has sent too many requests within a certain amount of time', { 'retry-after': '60' });
      return true;
    }
    return false;
  };

  let state: FakeState;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', state.baseUrl);
    let body = '';
    try {
      body = await readBody(req, MAX_BODY_BYTES);
    } catch (error) {
      if (error instanceof BodyTooLarge) return sendJson(res, 413, { error: 'Payload Too Large' });
      throw error;
    }
    const adminHandler = admin[`${method} ${url.pathname}`];
    if (adminHandler) return adminHandler(body, res);

    const found = findRoute(ROUTES, method, url.pathname);
    const key = found?.route.key ?? 'unknown';
    record({ route: key, method, path: url.pathname + url.search, ...(body ? { body } : {}) });
    if (!found) return sendJson(res, 404, { error: 'Not Found', path: url.pathname });

    const source = sourceOf(url.pathname);
    // LittleSkin sends the authlib-injector API location on every page.
    if (source === 'external') res.setHeader('x-authlib-injector-api-location', `${state.baseUrl}/external/api/yggdrasil/`);
    const ctx: FakeContext = {
      req, res, url, body, state, params: found.params,
      hang: () => {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
      },
    };
    if (knobs.latencyMs > 0) await sleep(knobs.latencyMs, undefined, { signal: closing.signal });
    if (interfere(ctx, source, key)) return;
    await found.route.handler(ctx);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (closing.signal.aborted) return void res.destroy();
      process.stderr.write(`fake-upstream: ${req.method} ${req.url} failed: ${(error as Error)?.stack ?? String(error)}\n`);
      if (!res.headersSent) sendJson(res, 500, { error: 'fake upstream failure', message: String(error) });
      else res.destroy();
    });
  });
  // Keys before the port: no answer ever waits on making one (it can outlast a short timeout).
  await Promise.all([signingKey('official'), signingKey('external')]);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const hostname = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const baseUrl = `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`;
  state = { baseUrl, players: new PlayerCatalogue(), oauth: new OAuthProvider(options.oauth ?? DEFAULT_OAUTH), answers: knobs.answers };

  return {
    baseUrl,
    env: {
      OFFICIAL_API_URL: `${baseUrl}/official/api`,
      OFFICIAL_SERVICES_URL: `${baseUrl}/official/services`,
      OFFICIAL_SESSION_URL: `${baseUrl}/official/session`,
      EXTERNAL_URL: `${baseUrl}/external`,
      EXTERNAL_YGGDRASIL_URL: `${baseUrl}/external/api/yggdrasil`,
      BEDROCK_API_URL: `${baseUrl}/bedrock`,
      BEDROCK_TEXTURE_URL: textureBase(baseUrl, 'official'),
      OFFICIAL_TEXTURE_URL: textureBase(baseUrl, 'official'),
      TEXTURE_HOSTS: new URL(baseUrl).host,
    },
    calls: () => ({ ...counters }),
    requests: () => log.map((r) => ({ ...r })),
    resetCalls,
    control,
    players: state.players,
    publicKeys: async () => ({ official: (await signingKey('official')).publicPem, external: (await signingKey('external')).publicPem }),
    prepareGenerated: async (count, source = 'official') => {
      const key = await signingKey(source);
      for (let i = 0; i < count; i++) {
        await sessionProfile(state.players.byName(source, `${source === 'official' ? 'gen' : 'ext'}_${i}`)!, baseUrl, key);
      }
    },
    close: () => {
      if (!closing.signal.aborted) {
        closing.abort();
        for (const res of hanging) res.destroy();
        closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
      }
      return closed;
    },
  };
}
