// The API process's runtime, settled at its first line (main.ts): what only a new process can
// have, it gets by replacing itself once with the same command: same pid, arguments and stdio.
// - jemalloc preloaded, when installed and not turned off (shared/allocator.ts);
// - V8's young generation at 16 MB semi-spaces. V8 sizes it when the process starts, so it
//   cannot be set later (v8-flags.ts sets what can be). With Node 24's 32 MB the embed mix ran a
//   full collection (9-16 ms pauses) about once a second; with 16 MB, paced at 1,000 req/s, the
//   p99 went 50 -> 33 ms and the API 0.76 -> 0.70 cores (medians of 4 interleaved runs each;
//   docs/benchmarks.md). One given on the command line or in NODE_OPTIONS is kept;
// - where the skins service runs, V8's old generation let grow to 1.5x its live size between
//   full collections. By V8's own rule (1.3-1.6x under warm renders, the caches ~70 MB live)
//   its background threads marked almost without pause: 0.61-0.68 ms of a 3.4-3.9 ms warm
//   render; at 1.5x 0.28-0.29 ms and the render 2.9-3.0 ms, the peak memory unchanged
//   (docs/benchmarks.md, "The old generation's growth");
// - for a search-only instance on PostgreSQL, V8's old generation capped at 128 MB.
import { jemallocEnvironment } from '../shared/allocator.ts';

export const SEMI_SPACE_FLAG = '--max-semi-space-size=16';
export const SEARCH_OLD_SPACE_FLAG = '--max-old-space-size=128';
export const HEAP_GROWING_FLAG = '--heap-growing-percent=50';

/** `flag` added to Node's own arguments, or the same array when they or NODE_OPTIONS give it already. */
function withFlag(execArgv: string[], nodeOptions: string, flag: string): string[] {
  const name = flag.slice(2, flag.indexOf('=')).replace(/[-_]/g, '[-_]');
  const given = (arg: string) => new RegExp(`^--${name}\\b`).test(arg);
  if (execArgv.some(given) || nodeOptions.split(/\s+/).some(given)) return execArgv;
  return [...execArgv, flag];
}

/** Node's own arguments with the semi-space flag, or the same array when one is given already. */
export function withSemiSpace(execArgv: string[], nodeOptions = ''): string[] {
  return withFlag(execArgv, nodeOptions, SEMI_SPACE_FLAG);
}

/** The services this process runs (SERVICES, all three when unset). */
function services(env: NodeJS.ProcessEnv): string[] {
  const named = (env.SERVICES ?? '').split(',').map((name) => name.trim().toLowerCase()).filter(Boolean);
  return named.length > 0 ? named : ['skins', 'media', 'search'];
}

/**
 * A search instance on PostgreSQL and nothing else holds no data of its own, only answers in
 * flight, yet V8 let its heap grow to ~300 MB under load before a full collection: capped, the
 * same load peaked lower (docs/benchmarks.md, search on PostgreSQL).
 */
export function searchOnPostgresOnly(env: NodeJS.ProcessEnv): boolean {
  const named = services(env);
  return named.length === 1 && named[0] === 'search' && Boolean(env.SEARCH_DATABASE_URL?.trim()) && !env.SEARCH_DATA?.trim();
}

/** Node's own arguments with the V8 settings this process should run with (the same array when it has them). */
export function withV8Flags(execArgv: string[], env: NodeJS.ProcessEnv): string[] {
  const options = env.NODE_OPTIONS ?? '';
  let flags = withSemiSpace(execArgv, options);
  if (services(env).includes('skins')) flags = withFlag(flags, options, HEAP_GROWING_FLAG);
  if (searchOnPostgresOnly(env)) flags = withFlag(flags, options, SEARCH_OLD_SPACE_FLAG);
  return flags;
}

/** Replaces this process by itself with those settings when it lacks one; returns when it stays. */
export function relaunch(): void {
  const env = jemallocEnvironment(process.env, process.platform);
  const execArgv = withV8Flags(process.execArgv, process.env);
  if ((!env && execArgv === process.execArgv) || typeof process.execve !== 'function') return;
  try {
    process.execve(process.execPath, [process.execPath, ...execArgv, ...process.argv.slice(1)], env ?? process.env);
  } catch (error) {
    // Still this process, as it was started: the service runs as it would have.
    process.stderr.write(`not relaunched with jemalloc and ${SEMI_SPACE_FLAG}: ${(error as Error).message}\n`);
  }
}
