// Runs one load measurement with wrk (a C load generator: Node-based clients saturate before a
// fast Node server does) and reads the JSON line of loadtest.lua. Without wrk, autocannon runs
// the same paths with the same client addresses, and the results say so.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import autocannon from 'autocannon';

const LUA = path.join(path.dirname(fileURLToPath(import.meta.url)), 'loadtest.lua');
const ADDRESSES = 131_072;

export interface LoadOptions {
  /** Origin only (http://127.0.0.1:port). */
  url: string;
  /** A file of request paths, one a line (see loadtest.lua). */
  pathsFile: string;
  seconds: number;
  connections: number;
  threads: number;
  /** A request slower than this counts as a timeout error. */
  timeoutSeconds: number;
  /**
   * Paths holding this text are a class of their own (a mix's cold tenth): the result then gives
   * both classes' latencies, timed through the X-Request-Id the service echoes (wrk only).
   */
  marker?: string;
  /**
   * Requests per second in all, paced (wrk only): latency then counts from when each request was
   * due, so a server that falls behind shows its queue; without it, a closed loop.
   */
  rate?: number;
  /** Sent with every request (an API key). */
  headers?: Record<string, string>;
}

/** Latencies of one class of requests (ms). */
export interface ClassLatency { requests: number; p50: number; p99: number }

export interface LoadResult {
  tool: 'wrk' | 'autocannon';
  requests: number;
  rps: number;
  /** Response bytes received in all (headers included). */
  bytes: number;
  p50: number;
  p90: number;
  p99: number;
  /** Connect, read, write errors and timeouts. */
  errors: number;
  /** Answers outside 2xx. */
  non2xx: number;
  statuses: Record<string, number>;
  /** With a marker (wrk): the marked paths' latencies and the others'; null where no answer echoed its id. */
  marked?: ClassLatency | null;
  unmarked?: ClassLatency | null;
}

export function findWrk(): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).concat('/usr/bin', '/usr/local/bin')) {
    const candidate = path.join(dir, 'wrk');
    if (dir && existsSync(candidate)) return candidate;
  }
  return null;
}

interface WrkJson {
  requests: number; duration_us: number; bytes: number;
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  latency_us: { p50: number; p90: number; p99: number };
  statuses: Record<string, number>;
  /** Latencies (us) of timed requests (paced or marked), all and by class; null when untimed. */
  timed: WrkClass | null;
  marked: WrkClass | null;
  unmarked: WrkClass | null;
}
interface WrkClass { requests: number; p50: number; p90: number; p99: number }

const ms = (us: number) => Math.round(us / 10) / 100;
const classOf = (c: WrkClass | null): ClassLatency | null => c && { requests: c.requests, p50: ms(c.p50), p99: ms(c.p99) };
const non2xx = (statuses: Record<string, number>) => Object.entries(statuses).reduce((n, [code, c]) => (code.startsWith('2') ? n : n + c), 0);

/**
 * Parses wrk's output: the LOADTEST_JSON line printed by loadtest.lua's done(). A paced run's
 * percentiles are the script's, counted from each request's due time; else wrk's own.
 */
export function parseWrkOutput(stdout: string, paced = false): LoadResult {
  const line = stdout.split('\n').find((l) => l.startsWith('LOADTEST_JSON '));
  if (!line) throw new Error(`wrk printed no result line:\n${stdout}`);
  const j = JSON.parse(line.slice('LOADTEST_JSON '.length)) as WrkJson;
  const latency = paced && j.timed ? j.timed : j.latency_us;
  return {
    tool: 'wrk',
    requests: j.requests,
    rps: Math.round(j.requests / (j.duration_us / 1e6)),
    bytes: j.bytes,
    p50: ms(latency.p50),
    p90: ms(latency.p90),
    p99: ms(latency.p99),
    errors: j.errors.connect + j.errors.read + j.errors.write + j.errors.timeout,
    non2xx: non2xx(j.statuses),
    statuses: j.statuses,
    marked: classOf(j.marked),
    unmarked: classOf(j.unmarked),
  };
}

async function runWithWrk(wrk: string, o: LoadOptions): Promise<LoadResult> {
  const threads = Math.max(1, Math.min(o.threads, o.connections));
  const headers = Object.entries(o.headers ?? {}).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
  const args = [`-t${threads}`, `-c${o.connections}`, `-d${o.seconds}s`, `--timeout`, `${o.timeoutSeconds}s`, ...headers, '-s', LUA, o.url, '--', o.pathsFile, String(threads), o.marker ?? ''];
  const env = o.rate ? { ...process.env, LOADTEST_RATE: String(o.rate) } : process.env;
  const { stdout } = await promisify(execFile)(wrk, args, { maxBuffer: 16 * 1024 * 1024, env });
  return parseWrkOutput(stdout, !!o.rate);
}

/** The fallback: the same paths and client addresses from autocannon (a ceiling of its own, ~10,000 req/s). */
async function runWithAutocannon(o: LoadOptions): Promise<LoadResult> {
  const paths = readFileSync(o.pathsFile, 'utf8').split('\n').filter(Boolean);
  let n = 0;
  const result = await autocannon({
    url: o.url, connections: o.connections, duration: o.seconds, timeout: o.timeoutSeconds,
    requests: [{
      setupRequest: (req) => {
        const a = n % ADDRESSES;
        const path = paths[n++ % paths.length];
        return { ...req, path, headers: { ...(req.headers ?? {}), ...o.headers, 'x-forwarded-for': `198.${18 + (a >> 16)}.${(a >> 8) & 255}.${a & 255}` } };
      },
    }],
  });
  const statuses: Record<string, number> = {};
  for (const [k, v] of Object.entries(result.statusCodeStats ?? {})) statuses[k] = (v as { count: number }).count;
  return {
    tool: 'autocannon',
    requests: result.requests.total,
    rps: Math.round(result.requests.total / o.seconds),
    bytes: result.throughput.total,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: non2xx(statuses),
    statuses,
  };
}

/**
 * wrk, installed from Debian's packages when it is missing (as root, or through sudo without a
 * password prompt); null when that cannot be done here.
 */
function installWrk(): string | null {
  if (!existsSync('/usr/bin/apt-get')) return null;
  const asRoot = process.getuid?.() === 0;
  process.stderr.write(`wrk not found: installing Debian's package (${asRoot ? '' : 'sudo -n '}apt-get install -y wrk)\n`);
  const aptGet = (...args: string[]) => spawnSync(asRoot ? 'apt-get' : 'sudo', asRoot ? args : ['-n', 'apt-get', ...args], {
    stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  // A machine whose package lists were never fetched knows no wrk yet.
  if (aptGet('install', '-y', '-q', 'wrk').status !== 0 && aptGet('update', '-q').status === 0) aptGet('install', '-y', '-q', 'wrk');
  return findWrk();
}

let resolved: { wrk: string | null } | undefined;
/** wrk's path, installing it once when missing; null means the runs use autocannon. */
export function ensureWrk(): string | null {
  if (!resolved) {
    resolved = { wrk: findWrk() ?? installWrk() };
    if (!resolved.wrk) process.stderr.write('wrk could not be installed: falling back to autocannon, whose own ceiling (~10,000 req/s) hides a fast server\n');
  }
  return resolved.wrk;
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const wrk = ensureWrk();
  if (!wrk && o.rate) throw new Error('a paced run needs wrk');
  return wrk ? runWithWrk(wrk, o) : runWithAutocannon(o);
}
