// HTTP load scenarios against the skins service on this machine (loopback only), each beside a
// bare node:http server sending the same bytes, measured with wrk in interleaved runs
// (service, bare, service, bare...) and reported as medians. Without --url it starts the fake
// upstream and `node api/main.ts` (LOG_LEVEL=warn, TRUST_PROXY=true) itself. docs/benchmarks.md
// "Method" says how each figure is taken.
//
//   npm run loadtest -- [scenario...|all] [--seconds 10] [--runs 3] [--connections 64] [--threads 2]
//                       [--players 10000] [--cached 1000] [--warmup 3] [--timeout 10] [--url http://127.0.0.1:3000] [--json]
//                       [--cpu-prof <dir>] [--node-arg <flag>]... [--rate <req/s>] [--warm-per-second 1500] [--crafatar <dir> [--crafatar-node <node>]]
//
// Without --rate each connection sends its next request the moment it is answered (a closed
// loop: at saturation, latency is mostly queueing). --rate paces the requests at that many per
// second in all, and latency counts from when each was due (wrk2's way), so a service that falls
// behind shows its queue: the latency a given load gets. A scenario with a slow class (embed's
// cold tenth) reports that class's latencies and the rest's apart.
//
// --cpu-prof writes V8 CPU profiles of the service (its main thread and each render thread) into
// <dir> when it stops: open them in Chrome DevTools, or `node scripts/bench/profile-summary.ts <dir>`.
// --node-arg starts the service's Node with that flag (a V8 setting to compare, say).
//
// --crafatar <dir> runs Crafatar (a copy built outside this repository: scripts/bench/crafatar.ts)
// beside the service on the same fake upstream, in the same interleaved runs (service, Crafatar,
// bare), on the scenarios it has a counterpart for: the same players in the same order, each
// image its nearest kind (a render is its body render at scale 6, 120 x 270 px; an avatar its
// avatar at the same size); renders/s and CPU per answered request of every process of each.
//
// Scenarios: hot-avatar, hot-render, warm-render, cold-render, cold-avatar, cold-body, embed, api (default hot-avatar).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { captureReply, startBareServer } from './bench/bare-server.ts';
import { median } from './bench/median.ts';
import { coresBetween, cpuOfTree, cpuOfTrees, cpuSecondsBetween, reapedChildrenCpuSeconds } from './bench/process-memory.ts';
import { crafatarUuid, startCrafatar, type Crafatar } from './bench/crafatar.ts';
import { assertLoopback, startBenchService } from './bench/service.ts';
import { newAngle, warmRenderEnv, warmRenderPath, warmTextures } from './bench/warm-render.ts';
import { ensureWrk, runLoad, type ClassLatency, type LoadResult } from './bench/wrk.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: 'string', default: '10' },
    runs: { type: 'string', default: '3' },
    connections: { type: 'string', default: '64' },
    threads: { type: 'string', default: '2' },
    players: { type: 'string', default: '10000' },
    cached: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '3' },
    timeout: { type: 'string', default: '10' },
    url: { type: 'string' },
    json: { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    'node-arg': { type: 'string', multiple: true, default: [] },
    rate: { type: 'string' },
    // warm-render's players per second of a run: each is drawn once, so a faster host needs more.
    'warm-per-second': { type: 'string', default: '1500' },
    crafatar: { type: 'string' },
    'crafatar-node': { type: 'string', default: process.env.CRAFATAR_NODE ?? '/usr/bin/node' },
  },
});

const int = (name: keyof typeof values, min: number, max: number): number => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer from ${min} to ${max}`);
  return n;
};
const seconds = int('seconds', 1, 600);
const runs = int('runs', 1, 25);
const connections = int('connections', 1, 4096);
const threads = int('threads', 1, 64);
const players = int('players', 10, 999_000);
const cached = int('cached', 1, Math.max(1, Math.floor(players / 2)));
const warmup = int('warmup', 0, 120);
const timeout = int('timeout', 1, 120);
const rate = values.rate === undefined ? undefined : int('rate', 1, 10_000_000);
/** Paths written per second of a cold run unless a scenario says more: a faster run would wrap and repeat. */
const PATHS_PER_SECOND = 5000;
/** A player no measured request names: its answers are the bare server's sample. */
const SAMPLE = 'gen_999999';
const player = (k: number) => `gen_${k % players}`;

interface Scenario {
  description: string;
  /** Hot scenarios repeat one path: they are warmed up before measuring. */
  hot: boolean;
  /** Paths written per second of a run (PATHS_PER_SECOND unless given). */
  pathsPerSecond?: number;
  /** Request paths of run r (global index k = r * count + i, so runs never share a cold request). */
  path(k: number): string;
  /** A request of the same shape for the bare server to replay. */
  sample: string;
  /** Text in the paths of a mix's slow class: its latencies and the others' are reported apart. */
  marker?: string;
  /** Players the fake upstream must have built (--players unless given). */
  players?: number;
  prepare?(base: string): Promise<void>;
  /** Crafatar's nearest request for request k, and what it needs fetched first (--crafatar). */
  crafatar?: { path(k: number): string; prepare?(base: string): Promise<void> };
}

const EMBED_KINDS = ['avatar', 'render', 'head', 'body'];
const embedCached = (n: number) => `/v1/${EMBED_KINDS[n % 4]}/gen_${Math.floor(n / 4) % cached}/64`;

/** warm-render's walk: a player per request, never one twice in the whole measurement (at most this many a second). */
const WARM_PER_SECOND = int('warm-per-second', 100, 100_000);
const warmPlayers = Math.max(15_000, runs * seconds * WARM_PER_SECOND);

/** Fetches the walk's players' skins and capes through the service before measuring. */
async function warmPlayersTextures(base: string, count: number): Promise<void> {
  const started = performance.now();
  await warmTextures(base, Array.from({ length: count }, (_, n) => n));
  say(`warm-render: ${count} players' skins and capes fetched in ${((performance.now() - started) / 1000).toFixed(1)} s, before measuring`);
}

/** Crafatar's body render of gen_k, scale 6 (120 x 270 px) with the outer layer: its nearest to our 180 px render. */
const crafatarBody = (k: number) => `/renders/body/${crafatarUuid(k)}?scale=6&overlay`;

/** Crafatar's warming: its skin of each player fetched (and kept on its disk) first. */
async function warmCrafatarSkins(base: string, count: number): Promise<void> {
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < count) {
      const res = await fetch(`${base}/skins/${crafatarUuid(next++)}`);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`crafatar: /skins of a player answered ${res.status}`);
    }
  }));
  say(`crafatar: ${count} players' skins fetched in ${((performance.now() - started) / 1000).toFixed(1)} s, before measuring`);
}

const SCENARIOS: Record<string, Scenario> = {
  'hot-avatar': {
    description: 'one cached 128 px avatar', hot: true, path: () => '/v1/avatar/gen_1/128', sample: '/v1/avatar/gen_1/128',
    crafatar: { path: () => `/avatars/${crafatarUuid(1)}?size=128&overlay` },
  },
  'hot-render': {
    description: 'one cached 3D render, 180 px', hot: true, path: () => '/v1/render/gen_1/180', sample: '/v1/render/gen_1/180',
    crafatar: { path: () => crafatarBody(1) },
  },
  'cold-avatar': {
    description: 'a new (player, size 9-512) each request',
    hot: false,
    // Each pass over the players moves every player to its next size: 504 passes before a repeat.
    path: (k) => `/v1/avatar/${player(k)}/${9 + ((Math.floor(k / players) + (k % players) * 131) % 504)}`,
    sample: `/v1/avatar/${SAMPLE}/128`,
    crafatar: { path: (k) => `/avatars/${crafatarUuid(k % players)}?size=${9 + ((Math.floor(k / players) + (k % players) * 131) % 504)}&overlay` },
  },
  'warm-render': {
    description: `/v1/render/<p>/180, a new angle each, each of ${warmPlayers} players once, their skins and capes fetched first: the render pipeline alone`,
    hot: false,
    pathsPerSecond: WARM_PER_SECOND,
    players: warmPlayers,
    path: warmRenderPath,
    sample: `/v1/render/${SAMPLE}/180?yaw=12.34`,
    prepare: (base) => warmPlayersTextures(base, warmPlayers),
    crafatar: { path: crafatarBody, prepare: (base) => warmCrafatarSkins(base, warmPlayers) },
  },
  'cold-render': {
    description: '/v1/render/<p>/180, a new angle each, over distinct players',
    hot: false,
    path: (k) => `/v1/render/${player(k)}/180?${newAngle(k)}`,
    sample: `/v1/render/${SAMPLE}/180?yaw=12.34`,
    crafatar: { path: (k) => crafatarBody(k % players) },
  },
  'cold-body': {
    description: '/v1/body/<p>/128 over distinct players (past --players, a new background keeps it cold)',
    hot: false,
    path: (k) => `/v1/body/${player(k)}/128${k < players ? '' : `?bg=${(Math.floor(k / players) % 0xffffff).toString(16).padStart(6, '0')}`}`,
    sample: `/v1/body/${SAMPLE}/128`,
  },
  embed: {
    description: `90% cached images (4 kinds x --cached players, 64 px), 10% cold renders of other players at new angles`,
    hot: false,
    // Mostly cached answers: a run can go far faster than the cold renders alone.
    pathsPerSecond: 40_000,
    path: (k) => {
      if (k % 10 !== 9) return embedCached(k);
      const n = Math.floor(k / 10);
      return `/v1/render/gen_${cached + (n % (players - cached))}/128?${newAngle(n)}`;
    },
    sample: embedCached(0),
    marker: 'yaw=',
    async prepare(base) {
      say(`embed: caching ${cached * 4} images first`);
      let next = 0;
      await Promise.all(Array.from({ length: 16 }, async () => {
        while (next < cached * 4) {
          const n = next++;
          const res = await fetch(`${base}${embedCached(n)}`, { headers: { 'x-forwarded-for': `198.19.${(n >> 8) & 255}.${n & 255}` } });
          await res.arrayBuffer();
        }
      }));
    },
  },
  api: {
    description: 'JSON lookups (player, uuid, a batch of 3) over distinct players',
    hot: false,
    path: (k) => [`/v1/player/${player(k)}`, `/v1/uuid/${player(k)}`, `/v1/batch?names=${player(k)},${player(k + 1)},${player(k + 2)}`][k % 3],
    pathsPerSecond: 20_000,
    sample: `/v1/player/${SAMPLE}`,
  },
};

const chosen = positionals.length === 0 ? ['hot-avatar'] : positionals.includes('all') ? Object.keys(SCENARIOS) : positionals;
for (const name of chosen) if (!SCENARIOS[name]) throw new Error(`unknown scenario ${name} (all, ${Object.keys(SCENARIOS).join(', ')})`);

function say(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** The median of the runs, to the hundredth. */
const medianOfRuns = (xs: number[]) => Math.round(median(xs) * 100) / 100;

/** Where the CPU went in a service run: the API process, Chromium's groups, the fake upstream (this process) and wrk. */
const CORE_KEYS = ['api', 'gpu', 'renderer', 'browser', 'fake', 'wrk'] as const;
type Cores = Record<(typeof CORE_KEYS)[number], number>;

/** Runs `measure` and reads how many cores each process took meanwhile (Linux /proc). */
async function withCores<T>(pid: number, seconds: number, measure: () => Promise<T>): Promise<{ result: T; cores: Cores }> {
  const tree = cpuOfTree(pid);
  const self = process.cpuUsage();
  const reaped = reapedChildrenCpuSeconds();
  const result = await measure();
  const groups = coresBetween(tree, cpuOfTree(pid), seconds);
  const fake = process.cpuUsage(self);
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    result,
    cores: {
      api: round(groups.api), gpu: round(groups.gpu), renderer: round(groups.renderer), browser: round(groups.browser + groups.other),
      fake: round((fake.user + fake.system) / 1e6 / seconds), wrk: round((reapedChildrenCpuSeconds() - reaped) / seconds),
    },
  };
}

/** p50 and p99 of a class of requests (ms). */
type Percentiles = Pick<ClassLatency, 'p50' | 'p99'>;
interface Summary {
  rps: number; p50: number; p99: number; errors: number; non2xx: number;
  /** A mix's slow class (the scenario's marker) and the rest, medians of p50 and p99. */
  marked?: Percentiles; unmarked?: Percentiles;
}
const classSummary = (cs: Array<ClassLatency | null | undefined>): Percentiles | undefined => {
  const known = cs.filter((c): c is ClassLatency => !!c);
  return known.length ? { p50: medianOfRuns(known.map((c) => c.p50)), p99: medianOfRuns(known.map((c) => c.p99)) } : undefined;
};
const summarise = (rs: LoadResult[]): Summary => ({
  rps: Math.round(medianOfRuns(rs.map((r) => r.rps))),
  p50: medianOfRuns(rs.map((r) => r.p50)),
  p99: medianOfRuns(rs.map((r) => r.p99)),
  errors: medianOfRuns(rs.map((r) => r.errors)),
  non2xx: medianOfRuns(rs.map((r) => r.non2xx)),
  marked: classSummary(rs.map((r) => r.marked)),
  unmarked: classSummary(rs.map((r) => r.unmarked)),
});
const classes = (s: { marked?: Percentiles | null; unmarked?: Percentiles | null }, marker: string) =>
  s.marked && s.unmarked ? `paths with "${marker}" p50 ${s.marked.p50} p99 ${s.marked.p99} ms, the rest p50 ${s.unmarked.p50} p99 ${s.unmarked.p99} ms` : '';

function machine() {
  const wrk = ensureWrk();
  let wrkVersion = 'absent (autocannon)';
  if (wrk) {
    try {
      execFileSync(wrk, ['-v'], { encoding: 'utf8' });
    } catch (error) {
      // wrk -v prints its version and exits 1.
      wrkVersion = /^wrk \S+/.exec(String((error as { stdout?: string }).stdout ?? ''))?.[0] ?? 'wrk';
    }
  }
  return {
    date: new Date().toISOString(),
    cores: os.availableParallelism(),
    cpu: os.cpus()[0]?.model.trim() ?? 'cpu',
    loadAtStart: Number(os.loadavg()[0].toFixed(2)),
    node: process.version,
    wrk: wrkVersion,
  };
}

const facts = machine();
if (values.url) assertLoopback(values.url);
const cpuProf = values['cpu-prof'] ? path.resolve(values['cpu-prof']) : null;
const env: Record<string, string> = chosen.includes('warm-render') ? warmRenderEnv(warmPlayers) : {};
const service = values.url ? null : await startBenchService({ nodeArgs: [...(cpuProf ? ['--cpu-prof', '--cpu-prof-dir', cpuProf] : []), ...values['node-arg']], env });
if (values.crafatar && !service) throw new Error('--crafatar needs the fake upstream this script starts: leave out --url');
const crafatar: Crafatar | null = values.crafatar ? await startCrafatar({ dir: path.resolve(values.crafatar), node: values['crafatar-node']!, fakeBase: service!.fakeBase }) : null;
const base = values.url ?? service!.url;
const dir = mkdtempSync(path.join(os.tmpdir(), 'skinfarm-loadtest-'));
const load = { seconds, connections, threads, timeoutSeconds: timeout, rate };
const results: Array<{
  scenario: string; marker: string | null; description: string; runs: Array<{ service: LoadResult; bare: LoadResult; crafatar?: LoadResult }>; service: Summary; bare: Summary; ratio: number;
  /** CPU ms per answered request, every process of the service (the fake and wrk left out); medians (null with --url). */
  cpuMs: number | null;
  /** The same scenario on Crafatar (--crafatar), with its CPU ms per answered request (its node and its Redis). */
  crafatar: { summary: Summary; cpuMs: number } | null;
  /** Cores each process group used during the service's runs, medians (null with --url). */
  cores: Cores | null;
  wrapped: boolean;
}> = [];

try {
  for (const name of chosen) {
    const scenario = SCENARIOS[name];
    if (!scenario.hot) await service?.prepare(Math.max(players, scenario.players ?? 0));
    await scenario.prepare?.(base);
    const reply = await captureReply(`${base}${scenario.sample}`, { 'x-forwarded-for': '198.19.255.254' });
    if (reply.status >= 300) say(`${name}: the sample request answered ${reply.status}; the bare server replays that`);
    const bare = await startBareServer(reply);
    try {
      const count = scenario.hot ? 1 : seconds * (scenario.pathsPerSecond ?? PATHS_PER_SECOND);
      const pathsFile = (run: number) => {
        const file = path.join(dir, `${name}-${run}.txt`);
        writeFileSync(file, `${Array.from({ length: count }, (_, i) => scenario.path(run * count + i)).join('\n')}\n`);
        return file;
      };
      const beside = crafatar && scenario.crafatar ? { url: crafatar.url, ...scenario.crafatar } : null;
      const besideFile = (run: number) => {
        const file = path.join(dir, `${name}-crafatar-${run}.txt`);
        writeFileSync(file, `${Array.from({ length: count }, (_, i) => beside!.path(run * count + i)).join('\n')}\n`);
        return file;
      };
      await beside?.prepare?.(beside.url);
      if (scenario.hot && warmup > 0) {
        say(`${name}: warming up ${warmup} s each`);
        const file = pathsFile(0);
        await runLoad({ ...load, seconds: warmup, url: base, pathsFile: file });
        await runLoad({ ...load, seconds: warmup, url: bare.url, pathsFile: file });
        if (beside) await runLoad({ ...load, seconds: warmup, url: beside.url, pathsFile: besideFile(0) });
      }
      const measured: Array<{ service: LoadResult; bare: LoadResult; crafatar?: LoadResult }> = [];
      const cores: Cores[] = [];
      const cpuMs: number[] = [];
      const besideCpuMs: number[] = [];
      let wrapped = false;
      for (let run = 0; run < runs; run++) {
        const file = pathsFile(run);
        // Where the cores went says what limits a scenario (this process serves the fake upstream).
        const serviceRun = () => runLoad({ ...load, url: base, pathsFile: file, marker: scenario.marker });
        const measuredRun = service ? await withCores(service.pid, seconds, serviceRun) : { result: await serviceRun(), cores: null };
        const a = measuredRun.result;
        if (measuredRun.cores) {
          const c = measuredRun.cores;
          cores.push(c);
          cpuMs.push(((c.api + c.gpu + c.renderer + c.browser) * seconds * 1000) / Math.max(1, a.requests - a.non2xx));
        }
        let other: LoadResult | undefined;
        if (beside) {
          const before = cpuOfTrees(crafatar!.pids);
          other = await runLoad({ ...load, url: beside.url, pathsFile: besideFile(run) });
          const used = cpuSecondsBetween(before, cpuOfTrees(crafatar!.pids));
          besideCpuMs.push((used * 1000) / Math.max(1, other.requests - other.non2xx));
          say(`${name} run ${run + 1}/${runs}: crafatar ${other.rps} req/s p50 ${other.p50} p99 ${other.p99} ms, errors ${other.errors}, non-2xx ${other.non2xx}, CPU ${besideCpuMs.at(-1)!.toFixed(2)} ms a 2xx answer`);
        }
        const b = await runLoad({ ...load, url: bare.url, pathsFile: file });
        if (!scenario.hot && a.requests > count) wrapped = true;
        say(`${name} run ${run + 1}/${runs}: service ${a.rps} req/s p50 ${a.p50} p99 ${a.p99} ms, errors ${a.errors}, non-2xx ${a.non2xx}; bare ${b.rps} req/s p50 ${b.p50} p99 ${b.p99} ms; `
          + (cores.length ? `cores ${CORE_KEYS.map((k) => `${k} ${cores.at(-1)![k]}`).join(', ')}` : '')
          + (scenario.marker ? `; ${classes(a, scenario.marker)}` : ''));
        measured.push({ service: a, bare: b, ...(other ? { crafatar: other } : {}) });
      }
      if (wrapped) say(`${name}: a run sent more than ${count} requests, so its paths came round again: its cold requests were not all cold (raise its pathsPerSecond)`);
      // embed's cold renders walk the players past --cached: beyond them, players come round again
      // with their profiles and skins cached, and the cold tenth is lighter than it says.
      const marked = measured.reduce((n, m) => n + (m.service.marked?.requests ?? 0), 0);
      if (marked > players - cached) say(`${name}: ${marked} cold requests went to ${players - cached} players, so some found their player's profile and skin cached (raise --players)`);
      const s = summarise(measured.map((m) => m.service));
      const b = summarise(measured.map((m) => m.bare));
      results.push({
        scenario: name, marker: scenario.marker ?? null, description: scenario.description, runs: measured, service: s, bare: b,
        ratio: Math.round((s.rps / b.rps) * 100) / 100, wrapped,
        cpuMs: cpuMs.length ? medianOfRuns(cpuMs) : null,
        crafatar: besideCpuMs.length ? { summary: summarise(measured.map((m) => m.crafatar!)), cpuMs: medianOfRuns(besideCpuMs) } : null,
        cores: cores.length ? (Object.fromEntries(CORE_KEYS.map((k) => [k, medianOfRuns(cores.map((c) => c[k]))])) as Cores) : null,
      });
    } finally {
      await bare.close();
    }
  }
} finally {
  await crafatar?.stop();
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
}

if (values.json) {
  console.log(JSON.stringify({ machine: facts, options: { seconds, runs, connections, threads, players, cached, rate: rate ?? null, url: values.url ?? null, crafatar: values.crafatar ?? null }, results }, null, 2));
} else {
  console.log(`${facts.date.slice(0, 16).replace('T', ' ')}: ${facts.cores} cores (${facts.cpu}), load ${facts.loadAtStart} at start, Node ${facts.node}, ${facts.wrk}; `
    + `${connections} connections, ${threads} threads, ${rate ? `paced at ${rate} req/s (latency from each request's due time)` : 'closed loop'}, `
    + `${seconds} s x ${runs} interleaved runs, medians, ${players} players`);
  console.log('');
  console.log(`| scenario | server | req/s | p50 ms | p99 ms | errors | non-2xx | of bare | cores: ${CORE_KEYS.join(' / ')} |`);
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const cores = r.cores ? CORE_KEYS.map((k) => r.cores![k]).join(' / ') : '-';
    console.log(`| ${r.scenario} | skinfarm | ${r.service.rps} | ${r.service.p50} | ${r.service.p99} | ${r.service.errors} | ${r.service.non2xx} | ${r.ratio} | ${cores} |`);
    if (r.crafatar) {
      const c = r.crafatar.summary;
      console.log(`| ${r.scenario} | Crafatar | ${c.rps} | ${c.p50} | ${c.p99} | ${c.errors} | ${c.non2xx} | ${Math.round((c.rps / r.bare.rps) * 100) / 100} | |`);
    }
    console.log(`| ${r.scenario} | bare node:http | ${r.bare.rps} | ${r.bare.p50} | ${r.bare.p99} | ${r.bare.errors} | ${r.bare.non2xx} | | |`);
  }
  for (const r of results) {
    if (!r.crafatar || r.cpuMs === null) continue;
    const c = r.crafatar;
    console.log(`\n${r.scenario} against Crafatar (medians): ${r.service.rps} against ${c.summary.rps} answers/s (${Math.round((r.service.rps / c.summary.rps) * 100) / 100}x); `
      + `CPU ${r.cpuMs.toFixed(2)} against ${c.cpuMs.toFixed(2)} ms an answer, every process of each (${Math.round((r.cpuMs / c.cpuMs) * 100) / 100} of Crafatar's)`);
  }
  for (const r of results) if (r.marker && r.service.marked) console.log(`\n${r.scenario}, by class (medians): ${classes(r.service, r.marker)}`);
}
