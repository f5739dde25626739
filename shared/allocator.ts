// Which malloc the process runs on. Node's native memory (Buffers, sharp, sockets, the render
// threads' messages) comes from the C library's malloc, and glibc's keeps what a load freed in
// its arenas: after a burst of cold renders about 110 MB of the API process stayed resident
// with nothing in it (docs/benchmarks.md, memory). jemalloc hands unused pages back to the system
// after a few seconds (a background thread does it while the service is idle). So on Linux, when
// Debian's libjemalloc2 is installed (Redis brings it), the process replaces itself once, at its
// first line, by the same command with jemalloc preloaded (api/relaunch.ts): same pid, same
// arguments, same stdio. MEMORY_ALLOCATOR=system keeps the C library's malloc.
import { existsSync } from 'node:fs';

/** Where Debian, Ubuntu, Fedora and Alpine put jemalloc's shared library. */
export const JEMALLOC_PATHS = [
  '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2',
  '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2',
  '/usr/lib64/libjemalloc.so.2',
  '/usr/lib/libjemalloc.so.2',
];

/** Pages unused for 5 s go back to the system, also while the process is idle. */
export const JEMALLOC_CONF = 'background_thread:true,dirty_decay_ms:5000,muzzy_decay_ms:0';

export type Allocator = 'jemalloc' | 'system';

/** The allocator this process runs on, as the environment says. */
export function currentAllocator(env: NodeJS.ProcessEnv = process.env): Allocator {
  return /libjemalloc/.test(env.LD_PRELOAD ?? '') ? 'jemalloc' : 'system';
}

/**
 * The environment to restart with to run on jemalloc, or null when that is not wanted, not
 * possible, or already so.
 */
export function jemallocEnvironment(env: NodeJS.ProcessEnv, platform: NodeJS.Platform, exists: (file: string) => boolean = existsSync): NodeJS.ProcessEnv | null {
  if (platform !== 'linux' || currentAllocator(env) === 'jemalloc') return null;
  if ((env.MEMORY_ALLOCATOR ?? '').trim().toLowerCase() === 'system') return null;
  const library = JEMALLOC_PATHS.find((file) => exists(file));
  if (!library) return null;
  return { ...env, LD_PRELOAD: [library, env.LD_PRELOAD].filter(Boolean).join(':'), MALLOC_CONF: env.MALLOC_CONF ?? JEMALLOC_CONF };
}

/**
 * The environment for child processes that bring their own allocator (Chromium has
 * PartitionAlloc): without the jemalloc this process preloaded for itself.
 */
export function withoutJemalloc(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (currentAllocator(env) !== 'jemalloc') return env;
  const { MALLOC_CONF: _conf, LD_PRELOAD: _preload, ...rest } = env;
  const preload = (env.LD_PRELOAD ?? '').split(/[:\s]+/).filter((entry) => entry && !/libjemalloc/.test(entry)).join(':');
  return preload ? { ...rest, LD_PRELOAD: preload } : rest;
}
