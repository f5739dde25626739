// Starts what the tests, the benchmarks and the demo run beside them, each as a user runs it: the
// service (`node api/main.ts` with environment variables) and a private redis-server, on free
// ports, stopped with SIGTERM. One launcher, so the tools measure the service the tests check.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export type ServiceName = 'skins' | 'media' | 'search';
type LogEntry = Record<string, unknown>;

/** Loopback, each port chosen by the system and read back from the service's 'listening' line. */
export const ON_FREE_PORTS = { HOST: '127.0.0.1', SKINS_PORT: '0', MEDIA_PORT: '0', SEARCH_PORT: '0' };

/** A port free on loopback now, for what must know its port before it starts. */
export async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

export interface LaunchOptions {
  /** Default 60 s: for the service to be ready (and media indexed). */
  timeoutMs?: number;
  /** Options for the service's node before its entry point, e.g. ['--cpu-prof', '--cpu-prof-dir', dir]. */
  nodeArgs?: string[];
  /** A command the service runs under, e.g. setpriv with fewer capabilities: [command, ...args]. */
  prefix?: string[];
  /** Sees every log line as it comes, with the process (e.g. to signal it before it is ready). */
  onLog?: (entry: LogEntry, child: ChildProcess) => void;
  /** Every line of output as it comes, to pass some of it on. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /** Once started, lines are not kept: a benchmark's access log must not pile up in the process that measures. */
  dropLogs?: boolean;
  /**
   * Ready when this base URL's /health answers 200, for a LOG_LEVEL (warn, error) that hides the
   * 'ready' line; media indexing is then not waited for (its line is hidden too).
   */
  health?: string;
  /** Return as soon as the services are ready, while media may still be indexing. */
  keepIndexing?: boolean;
  /** The service writes to this process's stdout and stderr, for a person (pretty on a terminal): nothing is captured or waited for. */
  inherit?: boolean;
  /**
   * Start it with `npm start`, as a user does (`prefix` and `nodeArgs` are then unused). npm does
   * not pass SIGTERM on to the script, so it runs in a process group of its own and stop() signals
   * the group, as a terminal's Ctrl-C does.
   */
  npmStart?: boolean;
  /** Another entry point than api/main.ts that logs 'ready' alike (scripts/render-node.ts). */
  entry?: string;
}

export interface RunningService {
  /** Each started service's base URL, from its 'listening' line. */
  urls: Record<ServiceName, string>;
  logs: LogEntry[];
  rawLog: string[];
  process: ChildProcess;
  /** Resolves with the first log entry matching, waiting for lines still in the pipe. */
  waitForLog(match: (entry: LogEntry) => boolean, timeoutMs?: number): Promise<LogEntry>;
  /** SIGTERM, then the exit code once it has exited. */
  stop(): Promise<number | null>;
}

/** An `onLine` for a benchmark: the service's stderr (a crash, say) reaches the console, its log does not. */
export function echoErrors(line: string, stream: 'stdout' | 'stderr'): void {
  if (stream === 'stderr') process.stderr.write(`${line}\n`);
}

/**
 * Starts `node api/main.ts` with `env` (besides PATH and HOME, nothing of this process's
 * environment unless the caller passes it) and resolves once it is ready: its 'ready' log line,
 * and when it runs media, 'media library indexed' (503 until then, an operator's first request
 * usually comes later).
 */
export async function launch(env: Record<string, string | undefined>, options: LaunchOptions = {}): Promise<RunningService> {
  const [command, ...args] = options.npmStart ? ['npm', 'start', '--silent'] : [...options.prefix ?? [], process.execPath, ...options.nodeArgs ?? [], path.join(ROOT, options.entry ?? 'api/main.ts')];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', options.inherit ? 'inherit' : 'pipe', options.inherit ? 'inherit' : 'pipe'],
    detached: options.npmStart,
  });
  const logs: LogEntry[] = [];
  const rawLog: string[] = [];
  const urls = {} as RunningService['urls'];
  const app: RunningService = { urls, logs, rawLog, process: child, waitForLog: (match, timeoutMs) => waitForLog(child, logs, match, timeoutMs), stop: () => stop(child, options.npmStart) };
  if (options.inherit) return app;

  let started = false;
  const keep = () => !started || !options.dropLogs;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start in time:\n${rawLog.join('\n')}`)), timeoutMs);
    const settle = (error?: Error) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve();
    };
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      options.onLine?.(line, 'stdout');
      if (!keep()) return;
      rawLog.push(line);
      let entry: LogEntry;
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      logs.push(entry);
      options.onLog?.(entry, child);
      if (entry.msg === 'listening' && typeof entry.service === 'string') urls[entry.service as ServiceName] = `http://127.0.0.1:${entry.port}`;
      if (entry.msg === 'ready' && !options.health) settle();
    });
    readline.createInterface({ input: child.stderr! }).on('line', (line) => {
      options.onLine?.(line, 'stderr');
      if (keep()) rawLog.push(line);
    });
    child.once('error', settle);
    // 'close', not 'exit': the last lines may still be in the pipe when the process has exited.
    child.once('close', (code) => settle(new Error(`service exited with ${code} before it was ready:\n${rawLog.join('\n')}`)));
    if (options.health) void untilHealthy(options.health, child).then((up) => up && settle());
  });
  try {
    await ready;
    const services = (env.SERVICES ?? 'skins,media,search').split(',');
    if (services.includes('media') && !options.keepIndexing && !options.health) await app.waitForLog((line) => line.msg === 'media library indexed', timeoutMs);
  } catch (error) {
    await app.stop();
    throw error;
  }
  started = true;
  return app;
}

/** Polls /health while the process runs: true once it answers 200 (503 while starting), false if it ended. */
async function untilHealthy(base: string, child: ChildProcess): Promise<boolean> {
  while (child.exitCode === null && child.signalCode === null) {
    if (await fetch(`${base}/health`).then((r) => r.ok, () => false)) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

function waitForLog(child: ChildProcess, logs: LogEntry[], match: (entry: LogEntry) => boolean, timeoutMs = 5000): Promise<LogEntry> {
  const found = logs.find(match);
  if (found) return Promise.resolve(found);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { off(); reject(new Error('log line not seen')); }, timeoutMs);
    const onLine = () => {
      const hit = logs.find(match);
      if (hit) { off(); resolve(hit); }
    };
    // readline parses on the same 'data' events; check after it has run.
    const onData = () => setImmediate(onLine);
    const off = () => { clearTimeout(timer); child.stdout!.off('data', onData); };
    child.stdout!.on('data', onData);
  });
}

async function stop(child: ChildProcess, group = false): Promise<number | null> {
  // Already ended (also by a signal: then 'exit' has been emitted and would never come again).
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  if (group) process.kill(-child.pid!, 'SIGTERM');
  else child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  return code as number | null;
}

export interface RedisServer { url: string; port: number; pid: number; stop(): Promise<void> }

/** Why no redis-server can start here (the binary is missing), or null. */
export function redisServerMissing(): string | null {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return probe.error ? `redis-server not found (${probe.error.message})` : null;
}

async function waitForPort(port: number, child: ChildProcess, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    const connected = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => { socket.end(); resolve(true); });
      socket.once('error', () => resolve(false));
    });
    if (connected) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('redis-server did not start in time');
}

/** A redis-server on loopback that keeps nothing on disk; `args`: more options (a memory bound and its policy, DEBUG enabled). */
async function startRedisOn(port: number, args: readonly string[] = []): Promise<RedisServer> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], { stdio: 'ignore' });
  await waitForPort(port, child, Date.now() + 10_000);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** A Redis on a free port; `startRedis.onPort(p)` starts one again where a stopped one was. */
export const startRedis = Object.assign(async (args: readonly string[] = []) => startRedisOn(await freePort(), args), { onPort: startRedisOn });
