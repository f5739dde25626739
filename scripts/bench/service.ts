// The service under a benchmark, started as a user runs it: the fake upstream in this process and
// `node api/main.ts` as a child with environment variables (LOG_LEVEL=warn, TRUST_PROXY=true,
// outgoing budgets off so 10,000 players are not throttled by our own limiter). Loopback only.
import { startFakeUpstream, type FakeUpstream } from '../fake-upstream/server.ts';
import { freePort, launch } from '../launch.ts';

const START_TIMEOUT_MS = 120_000;

export interface BenchService {
  url: string;
  /** The fake upstream's base URL (for a service run beside this one on the same players). */
  fakeBase: string;
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

/**
 * A benchmark's skins service: loopback, quiet, each request its own client (X-Forwarded-For),
 * and no outgoing upstream budgets (the fake upstream is the bench's own: what is measured is us).
 */
export const BENCH_SKINS_ENV: Record<string, string> = {
  SERVICES: 'skins', HOST: '127.0.0.1', LOG_LEVEL: 'warn', TRUST_PROXY: 'true',
  SESSION_SECRET: 'benchmark-session-secret-0123',
  OFFICIAL_NAMES_BUDGET: 'off', OFFICIAL_PROFILES_BUDGET: 'off', EXTERNAL_NAMES_BUDGET: 'off', EXTERNAL_PROFILES_BUDGET: 'off',
};

/**
 * Starts the fake upstream and the skins service. Variables in this process's environment win
 * over the defaults here (RENDER_WORKERS=1 npm run loadtest … tries one worker); `nodeArgs` go
 * to the service's node (`--cpu-prof` and its directory, say).
 */
export async function startBenchService(o: { nodeArgs?: string[]; env?: Record<string, string> } = {}): Promise<BenchService> {
  const fake: FakeUpstream = await startFakeUpstream();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // At LOG_LEVEL=warn there is no 'ready' line: /health says when. The service's warnings reach
  // the console, but not the 503s of that polling while it starts; nothing is kept here.
  const service = await launch({
    ...BENCH_SKINS_ENV,
    ...o.env,
    ...process.env,
    ...fake.env,
    SKINS_PORT: String(port),
  }, {
    nodeArgs: o.nodeArgs,
    health: url,
    timeoutMs: START_TIMEOUT_MS,
    dropLogs: true,
    onLine: (line) => {
      if (!(line.includes('"path":"/health"') && line.includes('"detail":"starting"'))) process.stderr.write(`${line}\n`);
    },
  }).catch(async (error: unknown) => {
    await fake.close();
    throw error;
  });
  const stop = async () => {
    await service.stop();
    await fake.close();
  };
  let prepared = 0;
  const prepare = async (players: number) => {
    if (players <= prepared) return;
    const started = performance.now();
    await fake.prepareGenerated(players);
    prepared = players;
    process.stderr.write(`fake upstream: ${players} players' signed profiles and skins built in ${((performance.now() - started) / 1000).toFixed(1)} s, before measuring\n`);
  };
  return { url, fakeBase: fake.baseUrl, pid: service.process.pid!, prepare, stop };
}
