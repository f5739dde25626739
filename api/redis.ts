// One Redis connection per process, shared by cache, rate limits, sessions and search keys (a
// second one for the cache when CACHE_REDIS_URL names another Redis). It reconnects by itself;
// callers treat a not-ready client as "Redis unavailable".
import { createClient, type RedisClientType } from '@redis/client';
import type { Logger } from '../shared/log.ts';

export interface RedisOptions {
  /**
   * Deadline of every command (ms): a Redis that stalls (a slow script, a fork on a full host,
   * DEBUG SLEEP) then costs a request this long, and the caller takes its in-process path.
   */
  commandTimeoutMs: number;
  /** How long start-up waits for the first connection before it gives up, naming REDIS_URL. */
  startTimeoutMs: number;
  /** `name`: the variable the URL came from, for the messages. */
  name: string;
  stop?: AbortSignal;
}

/** The URL as logs show it: without its password. */
export function shownUrl(url: string): string {
  return url.replace(/\/\/[^@]*@/, '//***@');
}

/** Redis did not answer within the start-up wait: the message names the variable, so it is logged as one line without a stack. */
export class RedisUnreachable extends Error {}

/** The socket errors a person meets at start, in words; anything else by its own message. */
const REFUSALS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'no such host',
  EHOSTUNREACH: 'host unreachable',
};

/**
 * Connects, or throws RedisUnreachable naming the variable once `startTimeoutMs` has passed (or
 * the abort reason at once when `stop` aborts). The first failure is told at once, with how long
 * the wait lasts: a Redis that is starting is waited for, a refusal is not hidden until the end.
 */
export async function connectRedis(url: string, log: Logger, options: RedisOptions): Promise<RedisClientType> {
  const client: RedisClientType = createClient({
    url,
    socket: {
      connectTimeout: 2000,
      reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 5000),
    },
    disableOfflineQueue: true,
  });
  const shown = shownUrl(url);
  const deadline = performance.now() + options.startTimeoutMs;
  let starting = true;
  let lastError = '';
  let lastReason = 'no answer';
  client.on('error', (err: NodeJS.ErrnoException) => {
    lastReason = REFUSALS[err.code ?? ''] ?? err.message;
    // The client retries forever; log each distinct failure once instead of every retry, the
    // first of a start as the wait it begins.
    if (starting && !lastError) log.warn(`waiting for Redis at ${shown} (${options.name}): ${lastReason}; giving up in ${Math.ceil((deadline - performance.now()) / 1000)} s`);
    else if (err.message !== lastError) log.warn('redis error', { err: err.message });
    lastError = err.message;
  });
  client.on('ready', () => {
    lastError = '';
    log.info('redis ready', { url: shown });
  });
  let timer: NodeJS.Timeout | undefined;
  let onStop: (() => void) | undefined;
  try {
    await Promise.race([
      client.connect(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new RedisUnreachable(`${options.name} (${shown}) did not answer within ${options.startTimeoutMs} ms (REDIS_START_TIMEOUT_MS): ${lastReason}; start Redis there or point ${options.name} at one that runs`)), options.startTimeoutMs);
        onStop = () => reject(options.stop!.reason);
        options.stop?.addEventListener('abort', onStop, { once: true });
      }),
    ]);
  } catch (error) {
    // The client would go on reconnecting (and hold the process open) otherwise.
    if (client.isOpen) client.destroy();
    throw error;
  } finally {
    starting = false;
    clearTimeout(timer);
    if (onStop) options.stop?.removeEventListener('abort', onStop);
  }
  return withDeadline(client, options.commandTimeoutMs, log);
}

/** What a Redis call answers when Redis did not reply within the deadline, or while it is skipped. */
export class RedisStalled extends Error {}

/** After a missed deadline, calls are refused at once this long, then tried again. */
const STALL_PAUSE_MS = 1000;

/** Calls that may rightly take long (or end the client): never given the command deadline. */
const UNBOUNDED = new Set(['connect', 'quit', 'close', 'disconnect', 'destroy']);

/**
 * The client with a deadline on every call that returns a promise. node-redis's own command
 * timeout covers only the wait before a command is written, not the wait for its reply, so a
 * stalled Redis (a slow script, DEBUG SLEEP, a fork on a full host) held every request for as
 * long as it slept. Past the deadline the caller gets RedisStalled and takes its in-process path;
 * for a second after that, calls are refused at once instead of each waiting its own deadline.
 * (A reply that comes late still reaches node-redis, which keeps its queue in order.)
 */
export function withDeadline(client: RedisClientType, deadlineMs: number, log: Logger): RedisClientType {
  let pausedUntil = 0;
  let stalled = false;
  const guard = (answer: Promise<unknown>): Promise<unknown> => {
    answer.then(() => {
      if (stalled) log.info('redis answers in time again');
      stalled = false;
    }, () => {});
    if (performance.now() < pausedUntil) return Promise.reject(new RedisStalled(`Redis missed its ${deadlineMs} ms deadline a moment ago; not waiting for it`));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        pausedUntil = performance.now() + STALL_PAUSE_MS;
        if (!stalled) log.warn('redis stalled: no answer within the deadline; serving from the process until it answers', { deadline_ms: deadlineMs });
        stalled = true;
        reject(new RedisStalled(`Redis did not answer within ${deadlineMs} ms`));
      }, deadlineMs);
    });
    return Promise.race([answer, late]).finally(() => clearTimeout(timer));
  };
  const guarded = new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || UNBOUNDED.has(property)) return value;
      return (...args: unknown[]) => {
        const result = value.apply(target, args);
        return result instanceof Promise ? guard(result) : result;
      };
    },
  });
  stallStates.set(guarded, () => stalled);
  return guarded;
}

const stallStates = new WeakMap<RedisClientType, () => boolean>();

/** Whether a client made by connectRedis last missed its deadline and has not answered in time since. */
export function isStalled(client: RedisClientType): boolean {
  return stallStates.get(client)?.() ?? false;
}

/**
 * Warns once at start about a cache Redis that can hurt the rest: one with no memory bound grows
 * with every distinct image asked for; one that evicts any key (allkeys-*) while it also holds
 * sessions, search keys and rate-limit counters drops those under cache churn. A Redis that does
 * not answer CONFIG (managed services) is taken on trust.
 */
export async function checkCacheRedis(client: RedisClientType, sharedWithState: boolean, log: Logger): Promise<void> {
  let settings: Record<string, string>;
  try {
    settings = await client.configGet(['maxmemory', 'maxmemory-policy']) as Record<string, string>;
  } catch {
    return;
  }
  const policy = settings['maxmemory-policy'] ?? '';
  if (settings.maxmemory === '0') log.warn('the cache Redis has no maxmemory: it grows with every distinct image; set maxmemory with an LRU policy (docs/security.md)');
  if (sharedWithState && policy.startsWith('allkeys-')) {
    log.warn(`REDIS_URL evicts any key (maxmemory-policy ${policy}) and also holds the cache: image churn can evict sessions, search keys and rate-limit counters; set CACHE_REDIS_URL to a Redis of its own (docs/security.md)`);
  }
}
