// Configuration: read once from the environment, validated in one pass, one typed object.
// Every problem is reported together, each naming the variable and what it accepts. Each read
// (api/settings.ts) declares its variable, and docs/configuration.md is written from them.
import os from 'node:os';
import { defaultLogFormat, type LogFormat, type LogLevel } from '../shared/log.ts';
import type { BodyLimits } from './http/body.ts';
import { parseTrustProxy, type TrustProxy } from './http/client-address.ts';
import { readMediaSettings, type MediaSettings } from './media/config.ts';
import { parseBudget, type BudgetSpec } from './skins/upstream/budget.ts';
import type { CountryCode } from 'libphonenumber-js';
import { DEFAULT_REGION, parseRegion } from './search/values/phone.ts';
import { DEFAULT_PLAN_FIGURES, FIGURE_BOUNDS, parsePlans, showPlans, type Plan, type PlanFigures } from './search/plans.ts';
import { DEFAULT_GPU_BACKEND, GPU_BACKENDS, GPU_MODES, type GpuBackend, type GpuMode } from '../renderer/gpu.ts';
import { flag, httpUrl, integer, list, oneOf, quota, secret, serverUrl, Settings, text, type Env, type Kind, type Section } from './settings.ts';

export type ServiceName = 'skins' | 'media' | 'search';
export const SERVICE_NAMES: readonly ServiceName[] = ['skins', 'media', 'search'];

export interface Config {
  host: string;
  ports: Record<ServiceName, number>;
  services: ServiceName[];
  publicUrl: string;
  /** False when PUBLIC_URL was derived from SKINS_PORT (then port 0 is resolved after listen). */
  publicUrlExplicit: boolean;
  logLevel: LogLevel;
  /** `json` lines, or `pretty` for a terminal (the default when stdout is one), with a start-up banner. */
  logFormat: LogFormat;
  /** One log line per request (turn off for load tests; errors are logged regardless). */
  accessLog: boolean;
  /** Mean event-loop lag (ms) above which requests are shed with 503 (0 = never). */
  maxLagMs: number;
  /** SITE_RATE_LIMIT: requests a minute per client on routes of no other group (pages, health, docs, 404s). */
  siteRateLimit: number;
  /** Seconds without a request after which memory is given back (caches kept; 0 = never). */
  idleTrimSeconds: number;
  /** `auto`: jemalloc when installed (Linux), else the C library's malloc; `system`: always the latter. */
  memoryAllocator: 'auto' | 'system';
  /** Which peers' X-Forwarded-* headers count (false, a hop count, proxy addresses, or all). */
  trustProxy: TrustProxy;
  /** What one request may take of a port (api/server.ts) and how request bodies are bounded (api/http/body.ts). */
  requests: { headersTimeoutMs: number; maxConnections: number; bodies: BodyLimits };
  /** `textureUrl`: where a texture asked for by its id (images, /v1/skin) is downloaded from. */
  official: { enabled: boolean; apiUrl: string; servicesUrl: string; sessionUrl: string; textureUrl: string };
  external: { enabled: boolean; url: string; yggdrasilUrl: string };
  /** GeyserMC's Global API, where its textures are, and the prefix Floodgate puts before gamertags. */
  bedrock: { enabled: boolean; apiUrl: string; textureUrl: string; namePrefix: string };
  /** Explicit allow-list; null = textures.minecraft.net + the external metadata's skinDomains. */
  textureHosts: string[] | null;
  upstream: {
    timeoutMs: number; retries: number; textureMaxBytes: number; budgets: Record<string, BudgetSpec>; nameBatchMs: number; errorTtlMs: number;
    /** How long a lookup with a stale entry waits for the upstream before answering that entry. */
    staleWaitMs: number;
    /** Faults in a row (timeouts, refused connections, 5xx) that open a source's circuit (0 = never), and its first open time. */
    circuit: { failures: number; openMs: number };
    /** Each client's share of the budgets: uncached lookups a minute, the reserve (%) kept for light clients, and what counts as light. */
    clientShare: { perMinute: number; reservePercent: number; lightSpend: number };
  };
  cache: { maxEntries: number; maxBytes: number; staleSeconds: number; ttl: CacheTtls };
  oauth: {
    clientId: string | null; clientSecret: string | null; redirectUrl: string | null; scopes: string[];
    /** How the client authenticates at the token endpoint (RFC 6749 2.3.1). */
    clientAuth: 'client_secret_basic' | 'client_secret_post';
    /** Expected `iss` of authorization responses (RFC 9207). */
    issuer: string;
  };
  sessionSecret: string | null;
  /** Who may read /metrics: the bearer token it requires, or (without one) anyone rather than this machine only. */
  metrics: { token: string | null; public: boolean };
  /** The player shown as the live example on the landing page. */
  demoPlayer: string;
  redisUrl: string | null;
  /**
   * Where the cache lives (CACHE_REDIS_URL, else REDIS_URL): a Redis of its own may evict freely
   * (allkeys-lru) while sessions, search keys and rate-limit counters stay on REDIS_URL.
   */
  cacheRedisUrl: string | null;
  /** Every Redis command's deadline, and how long start-up waits for Redis (ms). */
  redis: { commandTimeoutMs: number; startTimeoutMs: number };
  /** Whether an image request that names no format gets one from its Accept header (then Vary: Accept). */
  imageFormatFromAccept: boolean;
  /** Estimated CPU ms of drawing and encoding each client may cause a minute (api/skins/image-cost.ts). */
  imageWorkBudget: number;
  render: {
    workers: number; chromiumPath: string | null; gpu: GpuMode; gpuBackend: GpuBackend; queueLimit: number; jobTimeoutMs: number; batchSize: number; browsers: number | undefined;
    /** RENDER_QUEUE_URL: the skins service sends its jobs to render nodes over this broker and starts no browser; a render node takes them from it. */
    queueUrl: string | null;
  };
  media: MediaSettings;
  search: {
    adminToken: string | null; dataPath: string | null; timeoutMs: number;
    /** PostgreSQL holding imported data files (npm run search-import), instead of indexing SEARCH_DATA in memory. */
    databaseUrl: string | null;
    /** Connections to it per instance, and lookups waiting for one at most (past them a search's lookup is refused: `timed_out`). */
    databasePool: number;
    databaseQueue: number;
    /** Searches one key may have running at once in an instance (past it 429): no key holds the database pool alone. */
    keyConcurrency: number;
    /** Each source's own limit per pass, below the deadline so one slow source cannot use it all. */
    sourceTimeoutMs: number;
    /** ISO 3166 alpha-2 region of phone numbers written without a country code. */
    defaultRegion: CountryCode;
    /** Key of the audit line's query HMAC; null = made once and kept in Redis or DATA_DIR. */
    auditSecret: string | null;
    /** Where the search service is reached (its front page's examples); null = the request's origin. */
    publicUrl: string | null;
    /** Requests a minute per IP on /v1/search and /v1/key (SEARCH_RATE_LIMIT) and on the admin API (SEARCH_ADMIN_RATE_LIMIT). */
    rateLimit: number;
    adminRateLimit: number;
    /** What each plan allows (SEARCH_PLANS); a key's own overrides apply on top (api/search/plans.ts). */
    plans: Record<Plan, PlanFigures>;
  };
  dataDir: string;
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Outgoing budgets per upstream endpoint family ("N/S[:burst]"; "off" = unlimited). */
export const DEFAULT_BUDGETS = {
  'official.names': '600/600:60',
  'official.profiles': '600/600:60',
  'external.names': '1200/600:60',
  'external.profiles': '1200/600:60',
  'bedrock.names': '600/600:60',
  'bedrock.profiles': '600/600:60',
} as const;

/** Cache lifetimes in seconds; defaults are the spec's, each overridable (CACHE_TTL_<NAME>). */
export const DEFAULT_TTLS = {
  uuid: 3600,
  profile: 300,
  texture: 86_400,
  /**
   * Drawn images, in the shared cache: hours, not the spec's week (HTTP caches still keep them
   * as Cache-Control says). One is drawn again in milliseconds from the texture, which is kept a
   * day, and every distinct option set a client asks for is a new entry.
   */
  render: 21_600,
  announcements: 600,
  meta: 3600,
  /** "No such player" answers: shorter than a hit so a new account shows up soon. */
  negative: 60,
} as const;
export type CacheTtls = Record<keyof typeof DEFAULT_TTLS, number>;

/** What each cache lifetime keeps, for the reference. */
const TTL_KEEPS: Record<keyof typeof DEFAULT_TTLS, string> = {
  uuid: 'a name\'s UUID',
  profile: 'a profile (name, skin and cape)',
  texture: 'a texture file',
  render: 'a drawn image (6 h, not the spec\'s week: see [Security](security.md))',
  announcements: 'the external site\'s announcements',
  meta: 'the external site\'s Yggdrasil metadata (its `skinDomains`)',
  negative: 'a "no such player" answer (shorter than a hit, so a new account shows up soon)',
};

const PORT = integer(0, 65535);

const budget: Kind<BudgetSpec | null> = {
  rule: 'be "N/S" (N calls per S seconds), "N/S:burst" or "off"',
  parse: (value) => (value.toLowerCase() === 'off' ? null : parseBudget(value) ?? undefined),
};

const trustedProxies: Kind<TrustProxy> = {
  rule: 'be false, true, a hop count (1-32) or a comma list of proxy addresses/CIDRs',
  parse: (value) => {
    try {
      return parseTrustProxy(['no', 'off'].includes(value.toLowerCase()) ? 'false' : value);
    } catch {
      return undefined;
    }
  },
};

const region: Kind<CountryCode> = {
  rule: 'be an ISO 3166 alpha-2 country code with a numbering plan, such as US, GB, DE, CN',
  parse: (value) => parseRegion(value) ?? undefined,
};

const redisUrl = serverUrl('redis', 'rediss');

const plans: Kind<Record<Plan, PlanFigures>> = {
  rule: `be \`plan:figure=N,…\` parts between semicolons, plans ${Object.keys(DEFAULT_PLAN_FIGURES).join(', ')}, figures ${
    Object.entries(FIGURE_BOUNDS).map(([figure, { min, max }]) => `${figure} (${min}-${max})`).join(', ')}`,
  parse: parsePlans,
  show: showPlans,
};

export function loadConfig(env: Env = process.env): Config {
  const settings = new Settings(env);
  const config = readConfig(settings);
  if (settings.problems.length > 0) throw new ConfigError(settings.problems);
  return deepFreeze(config);
}

/** Every variable the configuration reads, by section, as docs/configuration.md shows it. */
export function describeConfig(): Section[] {
  const settings = new Settings({});
  readConfig(settings);
  return settings.declared();
}

/** LOG_FORMAT for the lines logged before the configuration is read (its problems are reported by loadConfig). */
export function bootLogFormat(env: Env = process.env): LogFormat {
  return readLogFormat(new Settings(env).section('boot'));
}

function readConfig(settings: Settings): Config {
  const base = readBase(settings.section('Services and addresses'));
  const operation = readOperation(settings.section('Logging and operation'));
  const upstreams = readUpstreams(settings.section('Upstreams (skins service)'));
  return {
    ...base,
    ...operation,
    ...upstreams,
    ...readStorage(settings.section('Cache and Redis')),
    requests: readRequests(settings.section('Requests and connections')),
    oauth: readOAuth(settings.section('Accounts (OAuth)'), upstreams.external.url),
    render: readRender(settings.section('Render farm')),
    ...readImages(settings.section('Images (skins service)')),
    media: readMediaSettings(settings.section('Media service'), { dataDir: base.dataDir, secret: base.sessionSecret }),
    search: readSearch(settings.section('Search service')),
  };
}

function readImages(s: Settings): Pick<Config, 'imageFormatFromAccept' | 'imageWorkBudget'> {
  return {
    imageFormatFromAccept: s.read('IMAGE_FORMAT_FROM_ACCEPT', false, flag, 'an image request that names no format (`format=`, an extension) gets WebP or AVIF when its `Accept` header names them (PNG otherwise), and the answer says `Vary: Accept`; `false`: Accept is ignored, such a request gets PNG ([Skins service](skins.md#image-formats))'),
    imageWorkBudget: s.read('IMAGE_WORK_BUDGET', 20_000, quota, 'the work each client may cause a minute by images that are not cached, in estimated CPU milliseconds of drawing and encoding (pixels x a measured cost per format: a 64 px PNG avatar 2, a 256 px WebP render 37, a 512 px AVIF body 499); past it 429 `rate_limited`, cached images are still served. The default lets a client spend its whole image quota on uncached 256 px images in PNG or WebP ([Security](security.md#work-per-client))'),
  };
}

function readBase(s: Settings): Pick<Config, 'host' | 'ports' | 'services' | 'publicUrl' | 'publicUrlExplicit' | 'dataDir' | 'sessionSecret'> {
  const host = s.read('HOST', '0.0.0.0', text, 'listen address');
  const ports = {
    skins: s.read('SKINS_PORT', 3000, PORT, 'port of the skins service (0 = any free port)'),
    media: s.read('MEDIA_PORT', 3001, PORT, 'port of the media service (0 = any free port)'),
    search: s.read('SEARCH_PORT', 3002, PORT, 'port of the search service (0 = any free port)'),
  };
  const services = s.read('SERVICES', [...SERVICE_NAMES], list({ allowed: SERVICE_NAMES }), 'which services this process runs');
  const publicUrl = s.optional('PUBLIC_URL', httpUrl, { default: '`http://localhost:${SKINS_PORT}`', meaning: 'base of every address written into records (`images.*`)' });
  return {
    host,
    ports,
    services: [...new Set(services)],
    publicUrl: publicUrl ?? `http://localhost:${ports.skins}`,
    publicUrlExplicit: publicUrl !== null,
    dataDir: s.read('DATA_DIR', './data', text, 'local persistent state when there is no Redis (media call counter, search keys, the audit secret)'),
    sessionSecret: s.optional('SESSION_SECRET', secret(16), { default: 'random per start (a warning)', meaning: 'signs session cookies and media login tokens; with the random key they end at restart' }),
  };
}

function readLogFormat(s: Settings): LogFormat {
  return s.read('LOG_FORMAT', defaultLogFormat(), oneOf(['json', 'pretty']), {
    default: '`pretty` on a terminal, else `json`',
    meaning: '`json`: one JSON object per line (what tools and the tests parse); `pretty`: `time LEVEL service: message key=value`, and a banner with every service\'s address once ready',
  });
}

function readOperation(s: Settings): Pick<Config, 'logLevel' | 'logFormat' | 'accessLog' | 'trustProxy' | 'metrics' | 'maxLagMs' | 'siteRateLimit' | 'idleTrimSeconds' | 'memoryAllocator'> {
  return {
    logLevel: s.read('LOG_LEVEL', 'info', oneOf(['debug', 'info', 'warn', 'error']), 'the least severe level logged'),
    logFormat: readLogFormat(s),
    accessLog: s.read('ACCESS_LOG', true, flag, 'one log line per request (errors are logged regardless)'),
    trustProxy: s.read('TRUST_PROXY', { mode: 'none' }, trustedProxies, {
      default: '`false`',
      meaning: 'which peers\' `X-Forwarded-*` headers count: `false`; a hop count `N` (that many proxies in front, each appending to `X-Forwarded-For`); or a comma list of proxy addresses/CIDRs. The client is the address just left of the last trusted hop. `true` trusts every hop (unsafe unless your proxy overwrites the header). See [Security](security.md)',
    }),
    metrics: {
      token: s.optional('METRICS_TOKEN', text, 'bearer token required by `/metrics` (compared in constant time)'),
      public: s.read('METRICS_PUBLIC', false, flag, 'without `METRICS_TOKEN`, `/metrics` answers only requests made on this machine (loopback, no forwarding header); `true` serves it to anyone'),
    },
    maxLagMs: s.read('MAX_EVENT_LOOP_LAG_MS', 250, integer(0, 60_000), 'event-loop lag above which requests are shed with 503 (0 = never)'),
    siteRateLimit: s.read('SITE_RATE_LIMIT', 600, quota, 'requests a minute per client, on every service, on the routes no other group counts: pages, `/health`, `/ready`, `/metrics`, `/docs` and its files, `/openapi.json`, CORS preflights and 404s (`/v1/status` and `/v1/sources` are counted in none, as the contract says); past it 429 `rate_limited`'),
    idleTrimSeconds: s.read('IDLE_TRIM_SECONDS', 15, integer(0, 86_400), 'after this long without a request (and 2 s after start, before any), memory is given back once: the render pages that drew are replaced by fresh ones, decoded textures are dropped, every thread\'s heap is collected; the response cache is kept (0 = never)'),
    // Acted on before the configuration is read (shared/allocator.ts); checked here so a typo fails.
    memoryAllocator: s.read('MEMORY_ALLOCATOR', 'auto', oneOf(['auto', 'system']), '`auto`: on Linux with jemalloc installed (Debian\'s `libjemalloc2`, which Redis brings), the API process replaces itself at its first line (same pid, `process.execve`) by the same command on jemalloc, which hands freed memory back to the system (Chromium keeps its own allocator); `system`: the C library\'s malloc, somewhat more cold avatars/s and ~130 MB more kept after a load ([benchmarks](benchmarks.md), the allocator A/B)'),
  };
}

function readRequests(s: Settings): Config['requests'] {
  const second = 1000;
  return {
    headersTimeoutMs: second * s.read('HEADERS_TIMEOUT_SECONDS', 20, integer(1, 600), 'a request\'s headers must arrive within this many seconds of its first byte, else 408 `request_timeout` and the connection is closed (Node\'s `headersTimeout`; its `requestTimeout`, for a whole request, is this plus `BODY_TIMEOUT_SECONDS` plus 5)'),
    maxConnections: s.read('MAX_CONNECTIONS', 1024, integer(1, 1_000_000), 'open connections each service\'s port accepts; a connection past it is closed at once (keep it under the process\'s open-file limit; a proxy in front should cap each client first: [operations](operations.md))'),
    bodies: {
      timeoutMs: second * s.read('BODY_TIMEOUT_SECONDS', 30, integer(1, 3600), 'a request body (an upload, a JSON body) must arrive in full within this many seconds of the first read, else 408 `request_timeout` and the connection is closed'),
      perClient: s.read('UPLOADS_PER_CLIENT', 4, integer(1, 10_000), 'request bodies one client (an address, an IPv6 /64) may be sending at once; one more is 429 `rate_limited` with `Retry-After`'),
      bytesInFlight: s.read('BODY_BYTES_IN_FLIGHT', 64 * 1024 * 1024, integer(1024 * 1024, 64 * 1024 ** 3), {
        default: '`67108864` (64 MiB)',
        meaning: 'bytes all request bodies being read may hold together, each counted at its `Content-Length` (a chunked one at its route\'s limit); a body that would pass it is 503 `overloaded` with `Retry-After`',
      }),
    },
  };
}

/** Floodgate's `username-prefix`: short, and nothing a gamertag starts with, so a prefixed name is never a gamertag too. */
const namePrefix: Kind<string> = {
  rule: 'be 1 to 3 characters, none a letter, digit or space',
  parse: (value) => (/^[^\p{L}\p{N}\s]{1,3}$/u.test(value) ? value : undefined),
};

function readBedrock(s: Settings): Config['bedrock'] {
  return {
    enabled: s.read('BEDROCK_ENABLED', true, flag, 'the bedrock source (GeyserMC\'s Global API: Bedrock players who joined a Geyser server); `false` switches it off'),
    apiUrl: s.read('BEDROCK_API_URL', 'https://api.geysermc.org', httpUrl, 'Global API root (`/v2/xbox/xuid/{gamertag}`, `/v2/xbox/gamertag/{xuid}`, `/v2/skin/{xuid}`)'),
    textureUrl: s.read('BEDROCK_TEXTURE_URL', 'https://textures.minecraft.net/texture', httpUrl, 'where a Bedrock skin\'s `texture_id` is downloaded from (`{url}/{texture_id}`); its host must be in the texture allow-list (`TEXTURE_HOSTS`)'),
    namePrefix: s.read('BEDROCK_NAME_PREFIX', '.', namePrefix, 'Floodgate\'s `username-prefix`: with `source=auto` a name starting with it is a Bedrock player\'s (and asks no other source)'),
  };
}

function readUpstreams(s: Settings): Pick<Config, 'official' | 'external' | 'bedrock' | 'textureHosts' | 'upstream' | 'demoPlayer'> {
  const official = {
    enabled: s.read('OFFICIAL_ENABLED', true, flag, 'the official source (Mojang); `false` switches it off'),
    apiUrl: s.read('OFFICIAL_API_URL', 'https://api.mojang.com', httpUrl, 'legacy name lookups'),
    servicesUrl: s.read('OFFICIAL_SERVICES_URL', 'https://api.minecraftservices.com', httpUrl, 'current name and bulk lookups'),
    sessionUrl: s.read('OFFICIAL_SESSION_URL', 'https://sessionserver.mojang.com', httpUrl, 'profiles with textures'),
    textureUrl: s.read('OFFICIAL_TEXTURE_URL', 'https://textures.minecraft.net/texture', httpUrl, 'where a texture named by its id in place of a player (images, `/v1/skin/{id}`) is downloaded from (`{url}/{id}`); its host must be in the texture allow-list (`TEXTURE_HOSTS`)'),
  };
  const enabled = s.read('EXTERNAL_ENABLED', true, flag, 'the external source (`EXTERNAL_URL`); `false` switches it off');
  const url = s.read('EXTERNAL_URL', 'https://littleskin.cn', httpUrl, 'external site root (OAuth, user API, announcements)');
  const external = { enabled, url, yggdrasilUrl: s.read('EXTERNAL_YGGDRASIL_URL', `${url}/api/yggdrasil`, httpUrl, { default: '`${EXTERNAL_URL}/api/yggdrasil`', meaning: 'Yggdrasil API root' }) };
  const bedrock = readBedrock(s);
  const textureHosts = s.optional('TEXTURE_HOSTS', list(), {
    default: '`textures.minecraft.net` + the external metadata\'s `skinDomains`',
    meaning: 'comma list; the only hosts texture files are downloaded from (`host`, `host:port`, `.suffix`)',
  });
  const upstream = {
    timeoutMs: s.read('UPSTREAM_TIMEOUT_MS', 5000, integer(100, 120_000), 'timeout of one upstream call'),
    retries: s.read('UPSTREAM_RETRIES', 1, integer(0, 5), 'retries of idempotent calls on 502/503/504 and connection resets'),
    textureMaxBytes: s.read('TEXTURE_MAX_BYTES', 2 * 1024 * 1024, integer(1024, 64 * 1024 * 1024), 'largest texture file accepted'),
    budgets: readBudgets(s),
    nameBatchMs: s.read('NAME_BATCH_WINDOW_MS', 5, integer(0, 1000), 'single name lookups arriving within this window of the last call are merged into one bulk call; one after a quiet window goes at once (0 = off)'),
    errorTtlMs: s.read('UPSTREAM_ERROR_TTL_MS', 5000, integer(0, 600_000), 'a failed upstream answer is remembered this long per key, so a failing upstream is not hammered'),
    staleWaitMs: s.read('UPSTREAM_STALE_WAIT_MS', 250, integer(0, 120_000), 'a lookup whose entry is stale waits this long (from the start of the upstream call) for the refresh, then answers the stale entry; the refresh goes on in the background'),
    circuit: {
      failures: s.read('UPSTREAM_CIRCUIT_FAILURES', 5, integer(0, 1000), 'timeouts, refused connections or 5xx in a row that open a source\'s circuit (0 = never)'),
      openMs: s.read('UPSTREAM_CIRCUIT_OPEN_MS', 10_000, integer(100, 600_000), 'how long the circuit first stays open; doubles after each failed probe, up to 10 min'),
    },
    clientShare: {
      perMinute: s.read('UPSTREAM_CLIENT_LOOKUPS', 200, quota, 'uncached upstream lookups one client (an address, or a search key) may cause a minute; each name or UUID of a batch that must be asked upstream counts one, a cached one nothing; past it 429 `rate_limited` for that client ([Skins](skins.md#upstream-protection))'),
      reservePercent: s.read('UPSTREAM_BUDGET_RESERVE_PERCENT', 50, integer(0, 90), 'part of each upstream budget\'s burst (`*_BUDGET`) kept for clients that have caused at most `UPSTREAM_LIGHT_CLIENT_LOOKUPS` uncached lookups this minute; a heavier client is refused (503 `upstream_busy`) rather than take it'),
      lightSpend: s.read('UPSTREAM_LIGHT_CLIENT_LOOKUPS', 20, integer(0, 1_000_000), 'uncached upstream lookups a minute up to which a client may still draw on the budgets\' reserve'),
    },
  };
  const demoPlayer = s.read('DEMO_PLAYER', 'Notch', text, {
    default: '`Notch` (`Knight` in the demo)',
    meaning: 'the live example on the landing page; when the upstreams fail (no network) its images are drawn with a built-in skin (`X-Demo-Fallback` header, not cached)',
  });
  return { official, external, bedrock, textureHosts: textureHosts?.map((h) => h.toLowerCase()) ?? null, upstream, demoPlayer };
}

function readBudgets(s: Settings): Record<string, BudgetSpec> {
  const out: Record<string, BudgetSpec> = {};
  for (const [family, fallback] of Object.entries(DEFAULT_BUDGETS)) {
    const [source, lookups] = family.split('.');
    const spec = s.read(`${source.toUpperCase()}_${lookups.toUpperCase()}_BUDGET`, parseBudget(fallback), budget, {
      default: `\`${fallback}\``,
      meaning: `outgoing budget of the ${source} source's ${lookups.replace(/s$/, '')} lookups: \`N/S\` = N calls per S seconds, \`:B\` burst (default N/10), \`off\` = unlimited`,
    });
    if (spec) out[family] = spec;
  }
  return out;
}

function readStorage(s: Settings): Pick<Config, 'cache' | 'redisUrl' | 'cacheRedisUrl' | 'redis'> {
  const cache = {
    maxEntries: s.read('CACHE_MAX_ENTRIES', 50_000, integer(100, 10_000_000), 'bound of the in-memory cache (LRU)'),
    maxBytes: s.read('CACHE_MAX_BYTES', 128 * 1024 * 1024, integer(1024 * 1024, 64 * 1024 ** 3), {
      default: '`134217728` (128 MiB)',
      meaning: 'bound in bytes of the in-memory cache (LRU): rendered images, textures and profiles it holds, the in-process copy over Redis too; the least recently used go first',
    }),
    staleSeconds: s.read('CACHE_STALE_SECONDS', 86_400, integer(0, 30 * 86_400), 'how long past its TTL an entry is kept to answer when the upstream fails'),
    ttl: Object.fromEntries(Object.entries(DEFAULT_TTLS).map(([name, seconds]) =>
      [name, s.read(`CACHE_TTL_${name.toUpperCase()}`, seconds, integer(0, 30 * 86_400), `seconds the cache keeps ${TTL_KEEPS[name as keyof CacheTtls]}`)])) as CacheTtls,
  };
  const redisUrlSet = s.optional('REDIS_URL', redisUrl, 'cache, rate-limit counters, sessions and search keys in Redis (shared by instances)');
  return {
    cache,
    redisUrl: redisUrlSet,
    cacheRedisUrl: s.optional('CACHE_REDIS_URL', redisUrl, {
      default: '`REDIS_URL`',
      meaning: 'the cache in a Redis of its own, which may evict freely (`allkeys-lru`) while sessions, keys and counters stay on `REDIS_URL`; see [Security](security.md)',
    }) ?? redisUrlSet,
    redis: {
      commandTimeoutMs: s.read('REDIS_COMMAND_TIMEOUT_MS', 200, integer(10, 60_000), 'deadline of every Redis call; past it the call is given up and the in-process path taken, and Redis is skipped for a second'),
      startTimeoutMs: s.read('REDIS_START_TIMEOUT_MS', 10_000, integer(100, 600_000), 'how long start-up waits for Redis; then it exits 1 naming the variable (an orchestrator restarts it)'),
    },
  };
}

function readOAuth(s: Settings, externalUrl: string): Config['oauth'] {
  return {
    clientId: s.optional('OAUTH_CLIENT_ID', text, 'the external OAuth app\'s client id'),
    clientSecret: s.optional('OAUTH_CLIENT_SECRET', text, 'its client secret'),
    redirectUrl: s.optional('OAUTH_REDIRECT_URL', text, 'its redirect URL (this service\'s `/oauth/external/callback`)'),
    scopes: s.read('OAUTH_SCOPES', ['User.Read', 'Player.Read', 'PremiumVerification.Read', 'Yggdrasil.MinecraftToken.Create'], list({ spaces: true }), 'scopes asked for at login (space or comma separated, as OAuth writes them)'),
    clientAuth: s.read('OAUTH_CLIENT_AUTH', 'client_secret_basic', oneOf(['client_secret_basic', 'client_secret_post']), 'how the client authenticates at the token endpoint: `client_secret_basic` (HTTP Basic) or `client_secret_post` (in the form); LittleSkin\'s Passport accepts both'),
    issuer: s.read('OAUTH_ISSUER', externalUrl, httpUrl, { default: '`EXTERNAL_URL`', meaning: 'the `iss` an authorization response must carry when it carries one (RFC 9207)' }),
  };
}

function readRender(s: Settings): Config['render'] {
  return {
    queueUrl: s.optional('RENDER_QUEUE_URL', serverUrl('amqp', 'amqps'), 'RabbitMQ (`amqp://user:password@host:5672/vhost`): the skins service starts no browser and sends its render jobs to render nodes (`npm run render-node`) through the durable queue `skinfarm.render`; a render node takes them from there. Without it the farm runs in the process ([operations](operations.md#render-nodes))'),
    // 0 switches the farm off (avatars and raw textures still work; 3D images answer 503).
    workers: s.read('RENDER_WORKERS', Math.max(1, os.availableParallelism()), integer(0, 64), { default: 'number of cores', meaning: 'Chromium pages in the render pool (0 = no farm: 3D images answer 503); on a render node its pages; means nothing to a skins service with `RENDER_QUEUE_URL`' }),
    queueLimit: s.read('RENDER_QUEUE_LIMIT', 512, integer(1, 100_000), 'jobs that may wait; past it 503 `overloaded` with `Retry-After` (with `RENDER_QUEUE_URL`: jobs this instance waits for at once)'),
    jobTimeoutMs: s.read('RENDER_TIMEOUT_MS', 10_000, integer(100, 120_000), 'per job; past it 500 `render_failed` (with `RENDER_QUEUE_URL`: the job\'s deadline, queue and node included, after which the broker and the nodes drop it unrendered)'),
    // Jobs one page draws in one frame: more is more renders/s, fewer is lower latency.
    batchSize: s.read('RENDER_BATCH_SIZE', 8, integer(1, 16), 'jobs one page draws in one frame (8 measured best on 2 cores)'),
    // Chromium instances the pages are spread over; 0 = one per page in software, one on a GPU.
    browsers: s.read('RENDER_BROWSERS', 0, integer(0, 64), 'Chromium instances the pages are spread over; 0 = auto: one, shared by every page (a second one per page drew no more on 2 cores and costs ~45 MB PSS each; more keep a crash to some pages)') || undefined,
    chromiumPath: s.optional('CHROMIUM_PATH', text, { default: 'auto', meaning: 'browser binary; auto tries a system Chromium, then the one in `@sparticuz/chromium`' }),
    gpu: s.read('RENDER_GPU', 'auto', oneOf(GPU_MODES), '`on` uses the GPU, `off` forces SwiftShader'),
    gpuBackend: s.read('RENDER_GPU_BACKEND', DEFAULT_GPU_BACKEND, oneOf(GPU_BACKENDS), 'the ANGLE backend WebGL runs on with a GPU: the driver\'s EGL (`gl-egl`, `gles-egl`) or `vulkan` ([operations](operations.md#on-a-gpu-host))'),
  };
}

/**
 * SEARCH_ADMIN_TOKEN: at least 128 random bits, as `openssl rand -hex 16` (32 hex characters) or
 * `openssl rand -base64 24` (22+ base64 characters, upper and lower case) makes. The admin API has
 * no budget shared by all clients (one guesser must not lock the operator out), so the token
 * itself must make guessing hopeless: words, runs (`0123…`, `aaaa…`) and repeated patterns are
 * refused. A random token passes these checks but for a chance far below one in ten thousand.
 */
export const strongAdminToken: Kind<string> = {
  rule: 'be a random token of at least 128 bits: 32+ hex characters or 22+ base64/base64url characters with upper and lower case, no words, runs or repeats (make one with `openssl rand -hex 16`)',
  parse: (value) => (strongToken(value) ? value : undefined),
  secret: true,
};

function strongToken(token: string): boolean {
  const hex = /^[0-9a-f]+$/i.test(token);
  if (token.length < (hex ? 32 : 22)) return false;
  // A random base64 string of 22 characters lacks one case with a chance of about 1 in 50,000;
  // a phrase of words almost always does.
  if (!hex && !(/[a-z]/.test(token) && /[A-Z]/.test(token))) return false;
  if (new Set(token).size < 8) return false;
  // A pattern repeated (abcabc…): the token is a rotation of itself.
  if ((token + token).indexOf(token, 1) < token.length) return false;
  // Runs: neighbours that are equal or one apart (aaaa, 0123, abcd) in more than half the pairs.
  let steps = 0;
  for (let i = 1; i < token.length; i += 1) if (Math.abs(token.charCodeAt(i) - token.charCodeAt(i - 1)) <= 1) steps += 1;
  return steps * 2 <= token.length - 1;
}

function readSearch(s: Settings): Config['search'] {
  const dataPath = s.optional('SEARCH_DATA', text, 'a JSONL file, or a folder (searched recursively) of `.jsonl` / `.ndjson` / `.csv` / `.tsv` files, indexed at start and re-indexed when they change; a path that does not exist stops the start, anything wrong inside the files does not ([Search service](search.md))');
  const databaseUrl = s.optional('SEARCH_DATABASE_URL', serverUrl('postgres', 'postgresql'), '`postgres://user:password@host:5432/db`: the data files live in PostgreSQL, imported with `npm run search-import`, instead of being indexed into memory at every start; set it or `SEARCH_DATA`, not both');
  const databasePool = s.read('SEARCH_DATABASE_POOL', 8, integer(1, 1000), 'connections to `SEARCH_DATABASE_URL` per instance (count them against the server\'s `max_connections`); a search\'s cross pass and the searches arriving together share one statement of at most ten values');
  const databaseQueue = s.read('SEARCH_DATABASE_QUEUE', 32, integer(0, 10_000), 'statements waiting for one of those connections at most, each for 2 s at most; past either the pool is full: that search\'s `local_index` is reported `timed_out` and the source stays up for the others (an overload, not an outage)');
  const keyConcurrency = s.read('SEARCH_KEY_CONCURRENCY', 8, integer(1, 1000), 'searches one API key may have running at once per instance; past it 429 `rate_limited` (not counted against the key\'s quota), so one key\'s parallel searches cannot fill `SEARCH_DATABASE_POOL` and its queue for every other key');
  if (dataPath && s.given('SEARCH_DATABASE_URL')) s.problem('SEARCH_DATA and SEARCH_DATABASE_URL are two backends: set one (import the files into the database with npm run search-import)');
  const adminToken = s.optional('SEARCH_ADMIN_TOKEN', strongAdminToken, 'enables the admin API (`Authorization: Bearer …`); without it the admin API answers `admin_disabled`. A random token of 128 bits at least (`openssl rand -hex 16`): there is no budget of wrong tokens shared by all clients, so a weaker one stops the start');
  const timeoutMs = s.read('SEARCH_TIMEOUT_MS', 8000, integer(100, 120_000), 'the deadline of one search (both passes)');
  const sourceTimeoutMs = s.read('SEARCH_SOURCE_TIMEOUT_MS', Math.round(timeoutMs / 2), integer(50, 120_000), {
    default: 'half of `SEARCH_TIMEOUT_MS`',
    meaning: 'each source\'s limit in each pass, below `SEARCH_TIMEOUT_MS` so the cross pass gets time; a source past it is reported `timed_out` with the reason `over its time limit (… ms)`',
  });
  if (sourceTimeoutMs >= timeoutMs) s.problem(`SEARCH_SOURCE_TIMEOUT_MS must be below SEARCH_TIMEOUT_MS (${timeoutMs}), so the cross pass gets time (got "${sourceTimeoutMs}")`);
  return {
    adminToken,
    dataPath,
    databaseUrl,
    databasePool,
    databaseQueue,
    keyConcurrency,
    timeoutMs,
    sourceTimeoutMs,
    defaultRegion: s.read('SEARCH_DEFAULT_REGION', DEFAULT_REGION, region, 'the region phone numbers without a country code are read in, in queries and in data files (`US` because the generated data, the examples and the fake upstream use North American 555-01xx numbers; an operator with national data sets their own)'),
    rateLimit: s.read('SEARCH_RATE_LIMIT', 600, quota, 'requests a minute per client on `/v1/search` (GET and POST together, and `/v1/search/bulk`), `/v1/search/sources` and `/v1/key`; past it 429 `rate_limited` before the key is looked up'),
    adminRateLimit: s.read('SEARCH_ADMIN_RATE_LIMIT', 120, quota, 'the same for the admin API (`/v1/admin/keys…`)'),
    plans: s.read('SEARCH_PLANS', DEFAULT_PLAN_FIGURES, plans, 'what each key plan allows, the figures named here replacing the defaults (`basic:searches_per_minute=60;premium:export_rows=0` changes two): `searches_per_minute` a key may make (per key, whatever its addresses; a bulk request counts each query; past it 429 `rate_limited`), `page_rows` a page may hold, `bulk_size` queries a bulk request may hold, `export_rows` an export may stream (0 = no export). A key\'s own figures (admin API, `search-keys`) replace its plan\'s ([Plans](search.md#plans))'),
    auditSecret: s.optional('SEARCH_AUDIT_SECRET', secret(16), {
      default: 'made at the first start',
      meaning: 'key of the audit line\'s query HMAC; without it a random 256-bit secret is made once and kept in Redis or `DATA_DIR/search-audit-secret`, so hashes stay comparable across restarts and instances',
    }),
    publicUrl: s.optional('SEARCH_PUBLIC_URL', httpUrl, { default: 'the request\'s origin', meaning: 'where the search service is reached: the front page\'s examples (and, for `/docs`, `http://localhost:${SEARCH_PORT}` when unset)' }),
  };
}

/** Read once, then never changed: what is only known at run time (listen ports) goes in a copy. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * The configuration the services run with: the loaded one plus the ports actually bound (port 0
 * means any free port) and PUBLIC_URL's default on the bound skins port.
 */
export function withListenAddresses(config: Config, ports: Partial<Record<ServiceName, number>>): Config {
  const bound = { ...config.ports, ...ports };
  const publicUrl = config.publicUrlExplicit ? config.publicUrl : `http://localhost:${bound.skins}`;
  return deepFreeze({ ...config, ports: bound, publicUrl });
}
