// The API process's runtime, settled at its first line (main.ts): what only a new process can
// have, it gets by replacing itself once with the same command: same pid, arguments and stdio.
// - jemalloc preloaded, when installed and not turned off (shared/allocator.ts);
// - V8's young generation at 16 MB semi-spaces. V8 sizes it when the process starts, so it
//   cannot be set later (v8-flags.ts sets what can be). With Node 24's 32 MB the embed mix ran a
//   full collection (9-16 ms pauses) about once a second; with 16 MB, paced at 1,000 req/s, the
//   p99 went 50 -> 33 ms and the API 0.76 -> 0.70 cores (medians of 4 interleaved runs each;
//   docs/benchmarks.md). One given on the command line or in NODE_OPTIONS is kept.
import { jemallocEnvironment } from '../shared/allocator.ts';

export const SEMI_SPACE_FLAG = '--max-semi-space-size=16';

/** Node's own arguments with the semi-space flag, or the same array when one is given already. */
export function withSemiSpace(execArgv: string[], nodeOptions = ''): string[] {
  const given = (arg: string) => /^--max[-_]semi[-_]space[-_]size\b/.test(arg);
  if (execArgv.some(given) || nodeOptions.split(/\s+/).some(given)) return execArgv;
  return [...execArgv, SEMI_SPACE_FLAG];
}

/** Replaces this process by itself with those settings when it lacks one; returns when it stays. */
export function relaunch(): void {
  const env = jemallocEnvironment(process.env, process.platform);
  const execArgv = withSemiSpace(process.execArgv, process.env.NODE_OPTIONS);
  if ((!env && execArgv === process.execArgv) || typeof process.execve !== 'function') return;
  try {
    process.execve(process.execPath, [process.execPath, ...execArgv, ...process.argv.slice(1)], env ?? process.env);
  } catch (error) {
    // Still this process, as it was started: the service runs as it would have.
    process.stderr.write(`not relaunched with jemalloc and ${SEMI_SPACE_FLAG}: ${(error as Error).message}\n`);
  }
}
