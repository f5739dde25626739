// Render nodes over RabbitMQ against today's in-process farm (issue #45), over HTTP, as users run
// them: the fake upstream in this process, (a) a skins service with its farm in the process and
// (b) a skins service with RENDER_QUEUE_URL on a vhost of its own (made and dropped here with
// rabbitmqctl) plus one render node with the same pages, each started as `node api/main.ts` /
// `node scripts/render-node.ts` (what `npm start` and `npm run render-node` run). Then, in one run:
//   - the warm-render walk with wrk (a player per request, never one twice in the run, its skin and
//     cape fetched through that service first, so each request is one real render): closed loop
//     at --connections, runs alternating in-process / queued, medians of renders/s, p50, p99;
//   - CPU per render by process group from /proc (the API instance's tree, the render node's tree
//     with its Chromium, RabbitMQ's beam.smp tree; the fake upstream and wrk left out), and the
//     queue's added CPU (API + broker + node against the in-process total) as a share;
//   - the broker's added latency: p50 queued minus p50 in-process at a paced --rate (low, so that
//     latency is not queueing), with the nodes' own reported queue wait beside it;
//   - the floor, on the same vhost: bare amqplib round trips of a job's and an answer's size with
//     no rendering (broker-floor.ts), their CPU and paced latency, against which the queue's
//     added CPU and latency are read;
//   - PSS (smaps_rollup, process tree) of each API instance idle 3 s after it first answers;
//   - a second render node on the same vhost and a run of renders: the share of jobs each did
//     (their `jobs.done` as /v1/status of the API instance lists them).
// One line per figure, then a `targets` line. Needs a broker and rabbitmqctl (root, or a user
// rabbitmqctl works for) and wrk (installed from Debian's packages when missing).
//
//   npm run bench:render-queue -- [--amqp amqp://guest:guest@127.0.0.1:5672] [--seconds 10] [--runs 3]
//     [--connections 16] [--threads 2] [--workers <cores>] [--gpu auto|on|off] [--rate 20]
//     [--paced-seconds 10] [--share-seconds 10] [--warmup 5] [--per-second 500] [--cpu-prof <dir>] [--json]
//
// --per-second: renders a second a closed run may reach before its list of players wraps round
// (a warning says so when it did); the players are at least 15,000 in all. --warmup: an unmeasured
// closed run of each setup first (fresh pages draw their first renders slower). Both setups run
// with IDLE_TRIM_SECONDS=0: the texture warming and the other setup's runs leave each one idle
// long enough for the default trim to replace its pages between runs, which this does not measure.
//
// --cpu-prof writes V8 CPU profiles of both API instances and the first render node (main threads
// and render threads) into <dir> when they stop (`node scripts/bench/profile-summary.ts <dir>`).
//
// This replaces the former function-level comparison (RenderFarm against RemoteFarm in this
// process, no HTTP, no CPU figures): the issue's figures are those of an API instance as users
// run it, whose HTTP, cache and texture work the function level left out.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { GPU_MODES } from '../../renderer/gpu.ts';
import { startFakeUpstream } from '../fake-upstream/server.ts';
import { freePort, launch, type RunningService } from '../launch.ts';
import { measureBrokerFloor, type BrokerFloor } from './broker-floor.ts';
import { BENCH_SKINS_ENV } from './service.ts';
import { warmRenderEnv, warmRenderPath, warmTextures } from './warm-render.ts';
import { median } from './median.ts';
import { cpuOfTrees, cpuSecondsBetween, sampleTree } from './process-memory.ts';
import { ensureWrk, runLoad, type LoadResult } from './wrk.ts';

const { values } = parseArgs({
  options: {
    amqp: { type: 'string', default: process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672' },
    seconds: { type: 'string', default: '10' },
    runs: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    threads: { type: 'string', default: '2' },
    workers: { type: 'string', default: String(os.availableParallelism()) },
    gpu: { type: 'string', default: 'auto' },
    rate: { type: 'string', default: '20' },
    'paced-seconds': { type: 'string', default: '10' },
    'share-seconds': { type: 'string', default: '10' },
    'per-second': { type: 'string', default: '500' },
    warmup: { type: 'string', default: '5' },
    'cpu-prof': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const cpuProf = values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(values['cpu-prof'])] : [];
const num = (k: keyof typeof values, min: number) => {
  const n = Number(values[k]);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${k} takes an integer from ${min}: ${values[k]}`);
  return n;
};
const seconds = num('seconds', 1);
const runs = num('runs', 1);
const connections = num('connections', 1);
const threads = num('threads', 1);
const workers = num('workers', 1);
const rate = num('rate', 1);
const pacedSeconds = num('paced-seconds', 0);
const shareSeconds = num('share-seconds', 0);
const perSecond = num('per-second', 10);
const warmupSeconds = num('warmup', 0);
if (!(GPU_MODES as readonly string[]).includes(values.gpu!)) throw new Error(`--gpu takes ${GPU_MODES.join(', ')}: ${values.gpu}`);
const gpu = values.gpu!;
const amqp = values.amqp!.replace(/\/+$/, '');

const say = (line: string) => process.stderr.write(`${line}\n`);
const round = (n: number, places = 1) => Math.round(n * 10 ** places) / 10 ** places;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// --- The players: disjoint slices, one per measured run, each warmed in the service that renders it.

type Setup = 'process' | 'queue';
interface Slice { from: number; count: number }
let nextPlayer = 0;
const slice = (count: number): Slice => {
  const s = { from: nextPlayer, count };
  nextPlayer += count;
  return s;
};
// The closed runs alone walk at least 15,000 distinct players.
const closedCount = Math.max(seconds * perSecond, Math.ceil(15_000 / (2 * runs)));
const pacedCount = Math.ceil(pacedSeconds * rate * 1.5) + 50;
// An unmeasured closed run each first: a page's first renders (its shaders, its JIT) are not the farm's.
const warm = warmupSeconds > 0 ? { process: slice(warmupSeconds * perSecond), queue: slice(warmupSeconds * perSecond) } : null;
const plan = Array.from({ length: runs }, () => ({
  closed: { process: slice(closedCount), queue: slice(closedCount) },
  paced: pacedSeconds > 0 ? { process: slice(pacedCount), queue: slice(pacedCount) } : null,
}));
const share = shareSeconds > 0 ? slice(Math.max(shareSeconds * perSecond, 2000)) : null;
const slicesOf = (setup: Setup) => [...(warm ? [warm[setup]] : []), ...plan.flatMap((p) => [p.closed[setup], ...(p.paced ? [p.paced[setup]] : [])]), ...(setup === 'queue' && share ? [share] : [])];

const dir = mkdtempSync(path.join(os.tmpdir(), 'skinfarm-render-queue-'));
const pathsFile = (s: Slice) => {
  const file = path.join(dir, `players-${s.from}.txt`);
  writeFileSync(file, `${Array.from({ length: s.count }, (_, i) => warmRenderPath(s.from + i)).join('\n')}\n`);
  return file;
};

/** Fetches each player's skin and cape through the service, so only the render remains. */
async function warmSlices(base: string, slices: Slice[]): Promise<void> {
  const players = slices.flatMap((s) => Array.from({ length: s.count }, (_, i) => s.from + i));
  const started = performance.now();
  await warmTextures(base, players);
  say(`${players.length} players' skins and capes fetched through ${base} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

// --- The broker.

const rabbitmqctl = async (...args: string[]) => (await promisify(execFile)('rabbitmqctl', ['--quiet', ...args])).stdout;

/** beam.smp's processes (the broker is the machine's: whatever else used it meanwhile counts too). */
function brokerPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (/(^|\/)beam\.smp$/.test(readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')[0])) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

// --- Processes and their CPU.

type Group = 'api' | 'node' | 'broker';
/** PSS and RSS (MB) of a process tree. PSS splits a page among the processes that map it (other Node processes here share node's text). */
const memoryMb = (root: number) => {
  const tree = sampleTree(root);
  return { pss: round(tree.reduce((kb, p) => kb + p.pssKb, 0) / 1024), rss: round(tree.reduce((kb, p) => kb + p.rssKb, 0) / 1024) };
};

const fake = await startFakeUpstream();
const vhost = `skinfarm-bench-${randomBytes(4).toString('hex')}`;
const user = decodeURIComponent(new URL(amqp).username || 'guest');
await rabbitmqctl('add_vhost', vhost);
await rabbitmqctl('set_permissions', '-p', vhost, user, '.*', '.*', '.*');
const queueUrl = `${amqp}/${encodeURIComponent(vhost)}`;

const running: RunningService[] = [];
async function startService(queue: string | null): Promise<{ url: string; pid: number; memory: { pss: number; rss: number } }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const service = await launch({
    ...BENCH_SKINS_ENV,
    ...warmRenderEnv(nextPlayer),
    RENDER_WORKERS: String(workers), RENDER_GPU: gpu, IDLE_TRIM_SECONDS: '0',
    ...(queue ? { RENDER_QUEUE_URL: queue } : {}),
    ...fake.env,
    SKINS_PORT: String(port),
  }, {
    health: url, timeoutMs: 120_000, dropLogs: true, nodeArgs: cpuProf,
    onLine: (line) => {
      if (!(line.includes('"path":"/health"') && line.includes('"detail":"starting"'))) say(line);
    },
  });
  running.push(service);
  const pid = service.process.pid!;
  await sleep(3000);
  return { url, pid, memory: memoryMb(pid) };
}
async function startNode(nodeArgs: string[] = []): Promise<RunningService> {
  const node = await launch({ RENDER_QUEUE_URL: queueUrl, RENDER_WORKERS: String(workers), RENDER_GPU: gpu, IDLE_TRIM_SECONDS: '0', LOG_LEVEL: 'info' }, {
    // Its 'ready' line says when it takes jobs (at info); the lines after it are not kept.
    entry: 'scripts/render-node.ts', nodeArgs, keepIndexing: true, timeoutMs: 120_000, dropLogs: true, onLine: (line, stream) => stream === 'stderr' && say(line),
  });
  running.push(node);
  return node;
}

interface NodeStatus { id: string; pid: number; consuming: boolean; jobs: { done: number; failed: number; expired: number; requeued: number }; queue_wait_ms: number }
async function nodesOf(base: string): Promise<NodeStatus[]> {
  const res = await fetch(`${base}/v1/status`);
  const body = await res.json() as { data?: { render?: { nodes?: NodeStatus[] } } };
  return body.data?.render?.nodes ?? [];
}
/** Until the API instance lists `count` nodes taking jobs. */
async function untilNodes(base: string, count: number): Promise<NodeStatus[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const nodes = await nodesOf(base);
    if (nodes.filter((n) => n.consuming).length >= count) return nodes;
    if (Date.now() > deadline) throw new Error(`the API instance lists ${nodes.length} node(s), not ${count}`);
    await sleep(500);
  }
}

interface Measured {
  load: LoadResult;
  renders: number;
  perSecond: number;
  /** CPU ms per render by group. */
  cpu: Partial<Record<Group, number>>;
  /** The nodes' reported longest queue wait per 2 s interval (ms), while the run went. */
  queueWaits: number[];
}

const load = { connections, threads, timeoutSeconds: 60 };
/** Measured runs whose list of players came round again (some of their answers were cache hits). */
const wrapped: string[] = [];
async function measure(setup: Setup, base: string, roots: Partial<Record<Group, number[]>>, s: Slice, o: { seconds: number; rate?: number }, measuredRun = true): Promise<Measured> {
  const file = pathsFile(s);
  const before = Object.fromEntries(Object.entries(roots).map(([g, pids]) => [g, cpuOfTrees(pids!)]));
  const queueWaits: number[] = [];
  let going = true;
  const polling = setup === 'queue' ? (async () => {
    while (going) {
      await sleep(2000);
      if (going) for (const n of await nodesOf(base).catch(() => [])) queueWaits.push(n.queue_wait_ms);
    }
  })() : Promise.resolve();
  const result = await runLoad({ ...load, url: base, pathsFile: file, seconds: o.seconds, rate: o.rate });
  going = false;
  const renders = result.requests - result.non2xx;
  const cpu: Partial<Record<Group, number>> = {};
  for (const [g, pids] of Object.entries(roots)) cpu[g as Group] = round((cpuSecondsBetween(before[g], cpuOfTrees(pids!)) * 1000) / Math.max(1, renders), 2);
  await polling;
  if (result.requests > s.count && measuredRun) wrapped.push(`${setup} ${result.requests}/${s.count}`);
  if (result.requests > s.count) say(`${setup}: a run sent ${result.requests} requests over ${s.count} players, so its list came round again (raise --per-second)`);
  if (result.non2xx || result.errors) say(`${setup}: ${result.non2xx} answers outside 2xx (${JSON.stringify(result.statuses)}), ${result.errors} errors`);
  return { load: result, renders, perSecond: Math.round(renders / o.seconds), cpu, queueWaits };
}

const out: Record<string, unknown> = {};
const print = (line: string) => console.log(line);

try {
  ensureWrk();
  await fake.prepareGenerated(nextPlayer);
  say(`fake upstream: ${nextPlayer} players built`);

  const local = await startService(null);
  say(`in-process instance up (pid ${local.pid}, ${workers} pages), PSS ${local.memory.pss} MB idle`);
  const remote = await startService(queueUrl);
  say(`queued instance up (pid ${remote.pid}), PSS ${remote.memory.pss} MB idle`);
  const node = await startNode(cpuProf);
  await untilNodes(remote.url, 1);
  await sleep(3000);
  const nodeMemory = memoryMb(node.process.pid!);

  await warmSlices(local.url, slicesOf('process'));
  await warmSlices(remote.url, slicesOf('queue'));

  const broker = brokerPids();
  if (!broker.length) say('no beam.smp process found here: the broker\'s CPU is not counted');
  const rootsOf: Record<Setup, Partial<Record<Group, number[]>>> = {
    process: { api: [local.pid] },
    queue: { api: [remote.pid], node: [node.process.pid!], broker },
  };
  const baseOf: Record<Setup, string> = { process: local.url, queue: remote.url };

  if (warm) {
    for (const setup of ['process', 'queue'] as const) {
      const m = await measure(setup, baseOf[setup], {}, warm[setup], { seconds: warmupSeconds }, false);
      say(`warm-up ${setup}: ${m.perSecond} renders/s, p50 ${m.load.p50} ms (not counted)`);
    }
  }
  const closed: Record<Setup, Measured[]> = { process: [], queue: [] };
  const paced: Record<Setup, Measured[]> = { process: [], queue: [] };
  for (let r = 0; r < runs; r += 1) {
    for (const setup of ['process', 'queue'] as const) {
      const m = await measure(setup, baseOf[setup], rootsOf[setup], plan[r].closed[setup], { seconds });
      closed[setup].push(m);
      say(`run ${r + 1}/${runs} ${setup}: ${m.perSecond} renders/s, p50 ${m.load.p50} p99 ${m.load.p99} ms, CPU ms/render ${JSON.stringify(m.cpu)}`);
    }
    const pacedSlices = plan[r].paced;
    if (pacedSlices) {
      for (const setup of ['process', 'queue'] as const) {
        const m = await measure(setup, baseOf[setup], rootsOf[setup], pacedSlices[setup], { seconds: pacedSeconds, rate });
        paced[setup].push(m);
        say(`run ${r + 1}/${runs} ${setup} paced at ${rate}/s: p50 ${m.load.p50} p99 ${m.load.p99} ms${m.queueWaits.length ? `, nodes' longest queue wait ${m.queueWaits.join(', ')} ms` : ''}`);
      }
    }
  }

  // The floor: bare amqplib round trips of a job's and an answer's size (a 64 px skin's RGBA with
  // a cape every other player and a header; a 180 px render's PNG) on the same broker.
  const floor: BrokerFloor = await measureBrokerFloor(queueUrl, { jobBytes: 21_000, answerBytes: 4_000, roundTrips: 5000, concurrency: connections, rate, paced: Math.max(100, pacedSeconds * rate), brokerPids: broker });
  say(`bare broker round trips: ${JSON.stringify(floor)}`);

  const cpuTotal = (m: Measured) => Object.values(m.cpu).reduce((a, b) => a + b, 0);
  const summary = (setup: Setup) => {
    const ms = closed[setup];
    const groups = Object.keys(rootsOf[setup]) as Group[];
    return {
      perSecond: median(ms.map((m) => m.perSecond)),
      p50: median(ms.map((m) => m.load.p50)),
      p99: median(ms.map((m) => m.load.p99)),
      cpu: Object.fromEntries(groups.map((g) => [g, round(median(ms.map((m) => m.cpu[g] ?? 0)), 2)])) as Partial<Record<Group, number>>,
      cpuTotal: round(median(ms.map(cpuTotal)), 2),
    };
  };
  const p = summary('process');
  const q = summary('queue');
  const addedCpu = round(((q.cpuTotal - p.cpuTotal) / p.cpuTotal) * 100);
  const pacedP50 = (s: Setup) => (paced[s].length ? median(paced[s].map((m) => m.load.p50)) : null);
  const addedLatency = paced.process.length ? round(pacedP50('queue')! - pacedP50('process')!, 2) : null;
  const waits = paced.queue.flatMap((m) => m.queueWaits);
  const closedWaits = closed.queue.flatMap((m) => m.queueWaits);

  const cpuLine = (c: Partial<Record<Group, number>>, farm: boolean) => Object.entries(c).map(([g, v]) => `${g === 'api' ? (farm ? 'API instance with its Chromium' : 'API instance') : g === 'node' ? 'render node (with Chromium)' : 'broker (beam.smp)'} ${v}`).join(', ');
  print(`${new Date().toISOString().slice(0, 16).replace('T', ' ')}: ${os.availableParallelism()} cores (${os.cpus()[0]?.model.trim()}), load ${os.loadavg()[0].toFixed(2)}, Node ${process.version}; ${workers} pages each (RENDER_GPU=${gpu}), warm-render /v1/render/<player>/180 over ${nextPlayer} distinct players, ${connections} connections, ${seconds} s x ${runs} alternating runs, medians`);
  print(`in-process farm: ${p.perSecond} renders/s, p50 ${p.p50} ms, p99 ${p.p99} ms`);
  print(`render node over RabbitMQ: ${q.perSecond} renders/s, p50 ${q.p50} ms, p99 ${q.p99} ms`);
  print(`CPU ms per render, in-process: ${cpuLine(p.cpu, true)}; total ${p.cpuTotal}`);
  print(`CPU ms per render, queued: ${cpuLine(q.cpu, false)}; total ${q.cpuTotal}`);
  print(`queue's added CPU per render: ${round(q.cpuTotal - p.cpuTotal, 2)} ms, ${addedCpu}% of the in-process total`);
  if (addedLatency !== null) {
    print(`paced at ${rate}/s (${pacedSeconds} s a run): in-process p50 ${pacedP50('process')} ms, queued p50 ${pacedP50('queue')} ms: the broker adds ${addedLatency} ms at p50`);
  }
  print(`the bare broker (amqplib round trips of 21 KB jobs and 4 KB answers, no rendering, same vhost): ${floor.cpuMs.clients} ms CPU of both ends and ${floor.cpuMs.broker} ms of the broker a round trip (${connections} at a time), so ${round(floor.cpuMs.clients + floor.cpuMs.broker, 2)} of the queue's added ${round(q.cpuTotal - p.cpuTotal, 2)} ms; paced at ${rate}/s p50 ${floor.paced.p50} ms, p99 ${floor.paced.p99} ms`);
  print(`nodes' reported longest queue wait per 2 s interval: ${waits.length ? `paced median ${median(waits)} ms (max ${Math.max(...waits)})` : 'paced: none reported'}; closed loop median ${closedWaits.length ? median(closedWaits) : '-'} ms`);
  const mem = (m: { pss: number; rss: number }) => `${m.pss} MB (RSS ${m.rss} MB)`;
  print(`PSS idle 3 s after answering: API instance with its farm (Chromium included) ${mem(local.memory)}; API instance with RENDER_QUEUE_URL ${mem(remote.memory)}; its render node (Chromium included, 3 s after ready) ${mem(nodeMemory)}`);

  let shares: number[] | null = null;
  if (share) {
    const second = await startNode();
    const nodes = await untilNodes(remote.url, 2);
    const done0 = new Map(nodes.map((n) => [n.id, n.jobs.done]));
    const m = await measure('queue', remote.url, {}, share, { seconds: shareSeconds });
    // A report every 2 s: wait for one past the run.
    await sleep(4500);
    const after = await nodesOf(remote.url);
    const did = after.map((n) => ({ pid: n.pid, jobs: n.jobs.done - (done0.get(n.id) ?? 0) }));
    const all = did.reduce((a, d) => a + d.jobs, 0);
    shares = did.map((d) => round((d.jobs / Math.max(1, all)) * 100));
    print(`two render nodes on one vhost, ${shareSeconds} s closed loop: ${m.perSecond} renders/s; ${did.map((d, i) => `node ${d.pid === node.process.pid ? 'first' : d.pid === second.process.pid ? 'second' : d.pid} ${d.jobs} jobs (${shares![i]}%)`).join(', ')}`);
  }

  if (wrapped.length) print(`WARNING: runs went past their players and got cached answers (requests/players: ${wrapped.join(', ')}): raise --per-second`);
  const target = (ok: boolean | null, text: string) => `${ok === null ? 'NOT MEASURED' : ok ? 'met' : 'MISSED'} (${text})`;
  print(`targets: broker latency under 1 ms at p50 ${target(addedLatency === null ? null : addedLatency < 1, addedLatency === null ? 'no paced run' : `${addedLatency} ms; a bare round trip ${floor.paced.p50} ms`)}; `
    + `added CPU under 15% a render ${target(addedCpu < 15, `${addedCpu}%; a bare round trip ${round(((floor.cpuMs.clients + floor.cpuMs.broker) / p.cpuTotal) * 100)}%`)}; `
    + `API PSS without a browser under 150 MB idle ${target(remote.memory.pss < 150, `${remote.memory.pss} MB, against ${local.memory.pss} MB with its farm`)}; `
    + `two nodes each 40-60% of the jobs ${target(shares === null ? null : shares.length === 2 && shares.every((s) => s >= 40 && s <= 60), shares === null ? 'no share run' : shares.map((s) => `${s}%`).join(' / '))}`);

  Object.assign(out, { process: p, queue: q, brokerFloor: floor, addedCpuPercent: addedCpu, pacedP50: { process: pacedP50('process'), queue: pacedP50('queue') }, addedLatencyMs: addedLatency, queueWaitsMs: { paced: waits, closed: closedWaits }, memoryMb: { process: local.memory, queue: remote.memory, node: nodeMemory }, shares, closed, paced });
} finally {
  for (const s of running.reverse()) await s.stop().catch(() => null);
  await fake.close();
  await rabbitmqctl('delete_vhost', vhost).catch((error: unknown) => say(`vhost ${vhost} not dropped: ${(error as Error).message}`));
  rmSync(dir, { recursive: true, force: true });
}
if (values.json) console.log(JSON.stringify(out, null, 2));
