// The service under a benchmark, started as a user runs it: the fake upstream in this process and
// `node api/main.ts` as a child with environment variables (LOG_LEVEL=warn, TRUST_PROXY=true,
// outgoing budgets off so 10,000 players are not throttled by our own limiter). Loopback only.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startFakeUpstream, type FakeUpstream } from '../fake-upstream/server.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const START_TIMEOUT_MS = 120_000;

export interface BenchService {
  url: string;
  /** The API process (Chromium runs in its process tree). */
  pid: number;
  /** Has the fake build gen_0 .. gen_{players-1}'s signed profiles and skins before a measurement. */
  prepare(players: number): Promise<void>;
  stop(): Promise<void>;
}

export function assertLoopback(url: string): void {
  const host = new URL(url).hostname;
  if (!['127.0.0.1', 'localhost', '[::1]', '::1'].includes(host)) throw new Error(`refusing to load ${host}: loopback only`);
}

/** A port free on loopback now (the benchmarks start their servers on it). */
export async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** Polls /health until the service answers (readiness, not timing). */
async function waitUntilUp(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode} before it was up`);
    const up = await fetch(`${url}/health`).then((r) => r.ok, () => false);
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the service was not up within ${START_TIMEOUT_MS / 1000} s`);
}

/**
 * Starts the fake upstream and the skins service. Variables in this process's environment win
 * over the defaults here (RENDER_WORKERS=1 npm run loadtest … tries one worker); `nodeArgs` go
 * to the service's node (`--cpu-prof` and its directory, say).
 */
export async function startBenchService(o: { nodeArgs?: string[] } = {}): Promise<BenchService> {
  const fake: FakeUpstream = await startFakeUpstream();
  const port = await freePort();
  const child = spawn(process.execPath, [...(o.nodeArgs ?? []), path.join(ROOT, 'api/main.ts')], {
    cwd: ROOT,
    env: {
      SERVICES: 'skins', HOST: '127.0.0.1', LOG_LEVEL: 'warn', TRUST_PROXY: 'true',
      SESSION_SECRET: 'benchmark-session-secret-0123',
      OFFICIAL_NAMES_BUDGET: 'off', OFFICIAL_PROFILES_BUDGET: 'off', EXTERNAL_NAMES_BUDGET: 'off', EXTERNAL_PROFILES_BUDGET: 'off',
      ...process.env,
      ...fake.env,
      SKINS_PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The service's warnings reach the console, but not the 503s of our own polling while it starts.
  readline.createInterface({ input: child.stdout! }).on('line', (line) => {
    if (!(line.includes('"path":"/health"') && line.includes('"detail":"starting"'))) process.stderr.write(`${line}\n`);
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    await fake.close();
  };
  try {
    await waitUntilUp(url, child);
  } catch (error) {
    await stop();
    throw error;
  }
  let prepared = 0;
  const prepare = async (players: number) => {
    if (players <= prepared) return;
    const started = performance.now();
    await fake.prepareGenerated(players);
    prepared = players;
    process.stderr.write(`fake upstream: ${players} players' signed profiles and skins built in ${((performance.now() - started) / 1000).toFixed(1)} s, before measuring\n`);
  };
  return { url, pid: child.pid!, prepare, stop };
}
