// Memory of the skins service (the API process and every Chromium process under it) idle, during
// cold renders over distinct skins, and after the load ends: RSS and PSS from /proc, sampled every
// second, grouped as api / browser / gpu / renderer / other. Linux only.
//
//   npm run bench:memory -- [--minutes 2] [--after 60] [--players 10000] [--connections 32] [--node-arg <flag>]... [--json]
//
// --node-arg starts the service's Node with that flag (a V8 flag such as --optimize-for-size).
//
// The target is over --minutes 10. The load is wrk on `/v1/render/gen_<p>/180?yaw=<new>`
// (the loadtest's cold-render scenario), one new player and angle a request.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { GROUPS, sampleTree, type Group, type ProcessMemory } from './process-memory.ts';
import { startBenchService } from './service.ts';
import { runLoad } from './wrk.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '2' },
    after: { type: 'string', default: '60' },
    players: { type: 'string', default: '10000' },
    connections: { type: 'string', default: '32' },
    'node-arg': { type: 'string', multiple: true, default: [] },
    json: { type: 'boolean', default: false },
  },
});
const minutes = Number(values.minutes);
const afterSeconds = Number(values.after);
const players = Number(values.players);
const connections = Number(values.connections);
if (!(minutes > 0 && minutes <= 60)) throw new Error('--minutes must be more than 0 and at most 60');
if (!(Number.isInteger(afterSeconds) && afterSeconds >= 0 && afterSeconds <= 3600)) throw new Error('--after must be 0 to 3600 seconds');
if (!(Number.isInteger(players) && players >= 1 && players <= 999_000)) throw new Error('--players must be 1 to 999000');
if (!(Number.isInteger(connections) && connections >= 1 && connections <= 1024)) throw new Error('--connections must be 1 to 1024');
const SAMPLE_MS = 1000;
const MB = 1024;

interface GroupMemory { processes: number; rssMb: number; pssMb: number; largestPssMb: number }
type Snapshot = Record<Group | 'total', GroupMemory>;

function snapshot(samples: ProcessMemory[]): Snapshot {
  const of = (list: ProcessMemory[]): GroupMemory => ({
    processes: list.length,
    rssMb: Math.round(list.reduce((n, p) => n + p.rssKb, 0) / MB),
    pssMb: Math.round(list.reduce((n, p) => n + p.pssKb, 0) / MB),
    largestPssMb: Math.round(Math.max(0, ...list.map((p) => p.pssKb)) / MB),
  });
  const out = { total: of(samples) } as Snapshot;
  for (const group of GROUPS) out[group] = of(samples.filter((p) => p.group === group));
  return out;
}

/** Samples every second while `during` runs; the snapshots in order. */
async function sampling<T>(pid: number, during: Promise<T>): Promise<{ result: T; snapshots: Snapshot[] }> {
  const snapshots: Snapshot[] = [snapshot(sampleTree(pid))];
  const timer = setInterval(() => snapshots.push(snapshot(sampleTree(pid))), SAMPLE_MS);
  try {
    return { result: await during, snapshots };
  } finally {
    clearInterval(timer);
    snapshots.push(snapshot(sampleTree(pid)));
  }
}

/** Per group, the sample with the largest PSS (the total's peak is the largest sum, not a sum of peaks). */
function peak(snapshots: Snapshot[]): Snapshot {
  const out = {} as Snapshot;
  for (const key of [...GROUPS, 'total'] as const) {
    out[key] = snapshots.map((s) => s[key]).reduce((a, b) => (b.pssMb > a.pssMb ? b : a));
  }
  return out;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const service = await startBenchService({ nodeArgs: values['node-arg'] });
const dir = mkdtempSync(path.join(os.tmpdir(), 'skinfarm-memory-'));
let report;
try {
  await service.prepare(players);
  // A moment for Chromium's pages to start after the service answers.
  await wait(5000);
  const idle = snapshot(sampleTree(service.pid));
  const seconds = Math.round(minutes * 60);
  // 1,000 new requests a second (the target is 600): past that the list comes round again.
  const count = Math.max(players, seconds * 1000);
  const pathsFile = path.join(dir, 'paths.txt');
  writeFileSync(pathsFile, `${Array.from({ length: count }, (_, k) => `/v1/render/gen_${k % players}/180?yaw=${((k % 36_000) / 100 - 180).toFixed(2)}&pitch=${(Math.floor(k / 36_000) % 181) - 90}`).join('\n')}\n`);
  process.stderr.write(`cold renders over ${players} players for ${seconds} s, ${connections} connections…\n`);
  const load = await sampling(service.pid, runLoad({ url: service.url, pathsFile, seconds, connections, threads: 2, timeoutSeconds: 30 }));
  if (load.result.requests > count) process.stderr.write(`the load sent more than ${count} requests: the later ones repeated earlier ones\n`);
  process.stderr.write(`load: ${load.result.rps} renders/s, p99 ${load.result.p99} ms, errors ${load.result.errors}, non-2xx ${load.result.non2xx}; watching ${afterSeconds} s after…\n`);
  const after = await sampling(service.pid, wait(afterSeconds * 1000));
  const end = after.snapshots.at(-1)!;
  // What the response cache holds then: kept on purpose (bounded by CACHE_MAX_BYTES), not given back.
  const status = await (await fetch(`${service.url}/v1/status`)).json() as { data: { cache: { entries: number; bytes: number | null } } };
  report = {
    machine: { date: new Date().toISOString(), cores: os.availableParallelism(), cpu: os.cpus()[0]?.model.trim(), node: process.version },
    options: { minutes, afterSeconds, players, connections, nodeArgs: values['node-arg'] },
    load: { rps: load.result.rps, p50: load.result.p50, p99: load.result.p99, errors: load.result.errors, non2xx: load.result.non2xx, requests: load.result.requests },
    idle,
    peak: peak(load.snapshots),
    after: end,
    cache: { entries: status.data.cache.entries, mb: Math.round((status.data.cache.bytes ?? 0) / 1048576) },
    /** Total PSS each second: during the load, then after it. */
    totalPssMb: { load: load.snapshots.map((s) => s.total.pssMb), after: after.snapshots.map((s) => s.total.pssMb) },
  };
} finally {
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}

if (values.json) {
  console.log(JSON.stringify(report, null, 2));
} else {
  const r = report;
  console.log(`${r.machine.date.slice(0, 16).replace('T', ' ')}: ${r.machine.cores} cores (${r.machine.cpu}), Node ${r.machine.node}; `
    + `${minutes} min of cold renders over ${players} players at ${connections} connections (${r.load.rps}/s, p99 ${r.load.p99} ms, errors ${r.load.errors}, non-2xx ${r.load.non2xx}), then ${afterSeconds} s idle`);
  console.log('');
  console.log('| processes | idle RSS MB | idle PSS MB | peak RSS MB | peak PSS MB | largest one, PSS MB | after RSS MB | after PSS MB |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const key of [...GROUPS, 'total'] as const) {
    const [i, p, a] = [r.idle[key], r.peak[key], r.after[key]];
    console.log(`| ${key} (${i.processes} / ${p.processes} / ${a.processes}) | ${i.rssMb} | ${i.pssMb} | ${p.rssMb} | ${p.pssMb} | ${p.largestPssMb} | ${a.rssMb} | ${a.pssMb} |`);
  }
  const [idle, top, end] = [r.idle.total.pssMb, r.peak.total.pssMb, r.after.total.pssMb];
  // Two readings of "falls back": the whole growth, and the growth besides the response cache's bytes.
  const quarter = end <= idle + (top - idle) / 4;
  const beyondCache = end <= idle + r.cache.mb + (top - idle - r.cache.mb) / 4;
  console.log('');
  console.log(`Total PSS: idle ${idle} MB, peak ${top} MB, ${afterSeconds} s after ${end} MB (${Math.round(((top - end) / (top - idle)) * 100)}% of the growth given back); `
    + `the response cache then held ${r.cache.mb} MB in ${r.cache.entries} entries.`);
  console.log(`Fell back within a quarter of the growth: ${quarter ? 'yes' : 'no'}; within a quarter of the growth besides the cache's bytes: ${beyondCache ? 'yes' : 'no'}.`);
}
