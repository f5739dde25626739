// Configuration: read once from the environment, validated in one pass, one typed object.
// Every problem is reported together, each naming the variable and what it accepts.
import os from 'node:os';
import { defaultLogFormat, type LogFormat, type LogLevel } from '../shared/log.ts';
import { parseTrustProxy, type TrustProxy } from './http/client-address.ts';
import { readMediaSettings, type MediaSettings } from './media/config.ts';
import { parseBudget, type BudgetSpec } from './skins/upstream/budget.ts';
import type { CountryCode } from 'libphonenumber-js';
import { DEFAULT_REGION, parseRegion } from './search/values/phone.ts';

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
  /** Seconds without a request after which memory is given back (caches kept; 0 = never). */
  idleTrimSeconds: number;
  /** `auto`: jemalloc when installed (Linux), else the C library's malloc; `system`: always the latter. */
  memoryAllocator: 'auto' | 'system';
  /** Which peers' X-Forwarded-* headers count (false, a hop count, proxy addresses, or all). */
  trustProxy: TrustProxy;
  official: { enabled: boolean; apiUrl: string; servicesUrl: string; sessionUrl: string };
  external: { enabled: boolean; url: string; yggdrasilUrl: string };
  /** Explicit allow-list; null = textures.minecraft.net + the external metadata's skinDomains. */
  textureHosts: string[] | null;
  upstream: {
    timeoutMs: number; retries: number; textureMaxBytes: number; budgets: Record<string, BudgetSpec>; nameBatchMs: number; errorTtlMs: number;
    /** How long a lookup with a stale entry waits for the upstream before answering that entry. */
    staleWaitMs: number;
    /** Faults in a row (timeouts, refused connections, 5xx) that open a source's circuit (0 = never), and its first open time. */
    circuit: { failures: number; openMs: number };
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
  render: { workers: number; chromiumPath: string | null; gpu: 'auto' | 'on' | 'off'; queueLimit: number; jobTimeoutMs: number; batchSize: number; browsers: number | undefined };
  media: MediaSettings;
  search: {
    adminToken: string | null; dataPath: string | null; timeoutMs: number;
    /** PostgreSQL holding imported data files (npm run search-import), instead of indexing SEARCH_DATA in memory. */
    databaseUrl: string | null;
    /** Each source's own limit per pass, below the deadline so one slow source cannot use it all. */
    sourceTimeoutMs: number;
    /** ISO 3166 alpha-2 region of phone numbers written without a country code. */
    defaultRegion: CountryCode;
    /** Key of the audit line's query HMAC; null = made once and kept in Redis or DATA_DIR. */
    auditSecret: string | null;
    /** Where the search service is reached (its front page's examples); null = the request's origin. */
    publicUrl: string | null;
    /** Requests a minute per IP on /v1/search (SEARCH_RATE_LIMIT) and on the admin API (SEARCH_ADMIN_RATE_LIMIT). */
    rateLimit: number;
    adminRateLimit: number;
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

type Env = Record<string, string | undefined>;

/** Outgoing budgets per upstream endpoint family ("N/S[:burst]"; "off" = unlimited). */
export const DEFAULT_BUDGETS = {
  'official.names': '600/600:60',
  'official.profiles': '600/600:60',
  'external.names': '1200/600:60',
  'external.profiles': '1200/600:60',
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

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const str = (name: string, fallback: string): string => {
    const value = env[name]?.trim();
    return value ? value : fallback;
  };
  const optional = (name: string): string | null => env[name]?.trim() || null;
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    // Plain decimal digits only: Number() would also take "0x40", "1e2" and "".
    if (!/^-?\d+$/.test(raw) || value < min || value > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = env[name]?.trim().toLowerCase();
    if (!raw) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
    if (['0', 'false', 'no', 'off'].includes(raw)) return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };
  const trustProxy = (): TrustProxy => {
    const raw = env.TRUST_PROXY?.trim();
    try {
      return parseTrustProxy(['no', 'off'].includes(raw?.toLowerCase() ?? '') ? 'false' : raw);
    } catch (error) {
      problems.push(`TRUST_PROXY must be false, true, a hop count (1-32) or a comma list of proxy addresses/CIDRs: ${(error as Error).message}`);
      return { mode: 'none' };
    }
  };
  const url = (name: string, fallback: string): string => {
    const value = str(name, fallback).replace(/\/+$/, '');
    try {
      const parsed = new URL(value);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
    } catch {
      problems.push(`${name} must be an absolute http(s) URL (got "${value}")`);
    }
    return value;
  };
  const oneOf = <T extends string>(name: string, fallback: T, allowed: readonly T[]): T => {
    const raw = env[name]?.trim().toLowerCase();
    if (!raw) return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
      return fallback;
    }
    return raw as T;
  };
  const list = (name: string): string[] | null => {
    const raw = env[name]?.trim();
    return raw ? raw.split(',').map((s) => s.trim()).filter(Boolean) : null;
  };

  const budgets = (): Record<string, BudgetSpec> => {
    const out: Record<string, BudgetSpec> = {};
    for (const [family, fallback] of Object.entries(DEFAULT_BUDGETS)) {
      const name = `${family.replace('.', '_').toUpperCase()}_BUDGET`;
      const text = str(name, fallback);
      if (text.toLowerCase() === 'off') continue;
      const spec = parseBudget(text);
      if (spec) out[family] = spec;
      else problems.push(`${name} must be "N/S" (N calls per S seconds), "N/S:burst" or "off" (got "${text}")`);
    }
    return out;
  };

  const searchSettings = (): Config['search'] => {
    const timeoutMs = int('SEARCH_TIMEOUT_MS', 8000, 100, 120_000);
    const sourceTimeoutMs = int('SEARCH_SOURCE_TIMEOUT_MS', Math.round(timeoutMs / 2), 50, 120_000);
    if (sourceTimeoutMs >= timeoutMs) problems.push(`SEARCH_SOURCE_TIMEOUT_MS must be below SEARCH_TIMEOUT_MS (${timeoutMs}), so the cross pass gets time (got "${sourceTimeoutMs}")`);
    const regionText = str('SEARCH_DEFAULT_REGION', DEFAULT_REGION);
    const defaultRegion = parseRegion(regionText);
    if (!defaultRegion) problems.push(`SEARCH_DEFAULT_REGION must be an ISO 3166 alpha-2 country code with a numbering plan, such as US, GB, DE, CN (got "${regionText}")`);
    const auditSecret = optional('SEARCH_AUDIT_SECRET');
    if (auditSecret && auditSecret.length < 16) problems.push('SEARCH_AUDIT_SECRET must be at least 16 characters');
    const databaseUrl = optional('SEARCH_DATABASE_URL');
    if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) problems.push('SEARCH_DATABASE_URL must start with postgres:// or postgresql://');
    if (databaseUrl && optional('SEARCH_DATA')) problems.push('SEARCH_DATA and SEARCH_DATABASE_URL are two backends: set one (import the files into the database with npm run search-import)');
    return {
      adminToken: optional('SEARCH_ADMIN_TOKEN'),
      dataPath: optional('SEARCH_DATA'),
      databaseUrl,
      timeoutMs,
      sourceTimeoutMs,
      defaultRegion: defaultRegion ?? DEFAULT_REGION,
      auditSecret,
      publicUrl: env.SEARCH_PUBLIC_URL?.trim() ? url('SEARCH_PUBLIC_URL', '') : null,
      rateLimit: int('SEARCH_RATE_LIMIT', 600, 1, 1_000_000),
      adminRateLimit: int('SEARCH_ADMIN_RATE_LIMIT', 120, 1, 1_000_000),
    };
  };

  const ports = {
    skins: int('SKINS_PORT', 3000, 0, 65535),
    media: int('MEDIA_PORT', 3001, 0, 65535),
    search: int('SEARCH_PORT', 3002, 0, 65535),
  };
  const services = (list('SERVICES') ?? [...SERVICE_NAMES]).map((s) => s.toLowerCase());
  for (const s of services) {
    if (!(SERVICE_NAMES as readonly string[]).includes(s)) problems.push(`SERVICES lists unknown service "${s}" (allowed: ${SERVICE_NAMES.join(', ')})`);
  }
  const externalUrl = url('EXTERNAL_URL', 'https://littleskin.cn');
  const sessionSecret = optional('SESSION_SECRET');
  const dataDir = str('DATA_DIR', './data');
  if (sessionSecret && sessionSecret.length < 16) problems.push('SESSION_SECRET must be at least 16 characters');

  const config: Config = {
    host: str('HOST', '0.0.0.0'),
    ports,
    services: [...new Set(services)].filter((s): s is ServiceName => (SERVICE_NAMES as readonly string[]).includes(s)),
    publicUrl: url('PUBLIC_URL', `http://localhost:${ports.skins}`),
    publicUrlExplicit: !!env.PUBLIC_URL?.trim(),
    logLevel: oneOf('LOG_LEVEL', 'info', ['debug', 'info', 'warn', 'error'] as const),
    logFormat: oneOf('LOG_FORMAT', defaultLogFormat(), ['json', 'pretty'] as const),
    trustProxy: trustProxy(),
    accessLog: bool('ACCESS_LOG', true),
    maxLagMs: int('MAX_EVENT_LOOP_LAG_MS', 250, 0, 60_000),
    idleTrimSeconds: int('IDLE_TRIM_SECONDS', 15, 0, 86_400),
    // Acted on before the configuration is read (shared/allocator.ts); checked here so a typo fails.
    memoryAllocator: oneOf('MEMORY_ALLOCATOR', 'auto', ['auto', 'system'] as const),
    official: {
      enabled: bool('OFFICIAL_ENABLED', true),
      apiUrl: url('OFFICIAL_API_URL', 'https://api.mojang.com'),
      servicesUrl: url('OFFICIAL_SERVICES_URL', 'https://api.minecraftservices.com'),
      sessionUrl: url('OFFICIAL_SESSION_URL', 'https://sessionserver.mojang.com'),
    },
    external: {
      enabled: bool('EXTERNAL_ENABLED', true),
      url: externalUrl,
      yggdrasilUrl: url('EXTERNAL_YGGDRASIL_URL', `${externalUrl}/api/yggdrasil`),
    },
    textureHosts: list('TEXTURE_HOSTS')?.map((h) => h.toLowerCase()) ?? null,
    upstream: {
      timeoutMs: int('UPSTREAM_TIMEOUT_MS', 5000, 100, 120_000),
      retries: int('UPSTREAM_RETRIES', 1, 0, 5),
      textureMaxBytes: int('TEXTURE_MAX_BYTES', 2 * 1024 * 1024, 1024, 64 * 1024 * 1024),
      budgets: budgets(),
      nameBatchMs: int('NAME_BATCH_WINDOW_MS', 5, 0, 1000),
      errorTtlMs: int('UPSTREAM_ERROR_TTL_MS', 5000, 0, 600_000),
      staleWaitMs: int('UPSTREAM_STALE_WAIT_MS', 250, 0, 120_000),
      circuit: { failures: int('UPSTREAM_CIRCUIT_FAILURES', 5, 0, 1000), openMs: int('UPSTREAM_CIRCUIT_OPEN_MS', 10_000, 100, 600_000) },
    },
    cache: {
      maxEntries: int('CACHE_MAX_ENTRIES', 50_000, 100, 10_000_000),
      maxBytes: int('CACHE_MAX_BYTES', 128 * 1024 * 1024, 1024 * 1024, 64 * 1024 ** 3),
      staleSeconds: int('CACHE_STALE_SECONDS', 86_400, 0, 30 * 86_400),
      ttl: Object.fromEntries(Object.entries(DEFAULT_TTLS).map(([name, seconds]) =>
        [name, int(`CACHE_TTL_${name.toUpperCase()}`, seconds, 0, 30 * 86_400)])) as CacheTtls,
    },
    oauth: {
      clientId: optional('OAUTH_CLIENT_ID'),
      clientSecret: optional('OAUTH_CLIENT_SECRET'),
      redirectUrl: optional('OAUTH_REDIRECT_URL'),
      // Space or comma separated, as OAuth writes scopes.
      scopes: env.OAUTH_SCOPES?.trim() ? env.OAUTH_SCOPES.trim().split(/[\s,]+/) : ['User.Read', 'Player.Read', 'PremiumVerification.Read', 'Yggdrasil.MinecraftToken.Create'],
      clientAuth: oneOf('OAUTH_CLIENT_AUTH', 'client_secret_basic', ['client_secret_basic', 'client_secret_post'] as const),
      issuer: url('OAUTH_ISSUER', externalUrl),
    },
    sessionSecret,
    metrics: { token: optional('METRICS_TOKEN'), public: bool('METRICS_PUBLIC', false) },
    demoPlayer: str('DEMO_PLAYER', 'Notch'),
    redisUrl: optional('REDIS_URL'),
    cacheRedisUrl: optional('CACHE_REDIS_URL') ?? optional('REDIS_URL'),
    redis: { commandTimeoutMs: int('REDIS_COMMAND_TIMEOUT_MS', 200, 10, 60_000), startTimeoutMs: int('REDIS_START_TIMEOUT_MS', 10_000, 100, 600_000) },
    render: {
      // 0 switches the farm off (avatars and raw textures still work; 3D images answer 503).
      workers: int('RENDER_WORKERS', Math.max(1, os.availableParallelism()), 0, 64),
      chromiumPath: optional('CHROMIUM_PATH'),
      gpu: oneOf('RENDER_GPU', 'auto', ['auto', 'on', 'off'] as const),
      queueLimit: int('RENDER_QUEUE_LIMIT', 512, 1, 100_000),
      jobTimeoutMs: int('RENDER_TIMEOUT_MS', 10_000, 100, 120_000),
      // Jobs one page draws in one frame: more is more renders/s, fewer is lower latency.
      batchSize: int('RENDER_BATCH_SIZE', 8, 1, 16),
      // Chromium instances the pages are spread over; 0 = one per page in software, one on a GPU.
      browsers: int('RENDER_BROWSERS', 0, 0, 64) || undefined,
    },
    media: readMediaSettings(env, { dataDir, secret: sessionSecret }, problems),
    search: searchSettings(),
    dataDir,
  };
  for (const [name, value] of [['REDIS_URL', config.redisUrl], ['CACHE_REDIS_URL', optional('CACHE_REDIS_URL')]]) {
    if (value && !/^rediss?:\/\//.test(value)) problems.push(`${name} must start with redis:// or rediss:// (got "${value}")`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
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
