// Where a warm render's CPU goes, thread by thread (Linux): the skins service started as a user runs
// it (variables in this environment win, as for loadtest), every player's skin and cape fetched
// through it first, then runs of wrk on the warm-render walk (warm-render.ts: each player once, at
// a new angle), each run over players of its own after a short unmeasured one. CPU of every thread
// of the API process and of each Chromium process, from /proc before and after each run, in ms per
// answered render; the median of the runs.
//
//   npm run bench:threads -- [--players 24000] [--runs 2] [--seconds 6] [--connections 16] [--node-arg <flag>]... [--json]
//
// A run that answers more requests than it has players came round its list (answers from the
// cache, not renders): the tool says so and stops; give more --players.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { median } from './median.ts';
import { threadCpuOfTree, threadSecondsBetween } from './process-memory.ts';
import { startBenchService } from './service.ts';
import { warmRenderEnv, warmRenderPath, warmTextures } from './warm-render.ts';
import { runLoad } from './wrk.ts';

const { values } = parseArgs({
  options: {
    players: { type: 'string', default: '24000' },
    runs: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '6' },
    connections: { type: 'string', default: '16' },
    'node-arg': { type: 'string', multiple: true, default: [] },
    json: { type: 'boolean', default: false },
  },
});
const players = Number(values.players);
const runs = Number(values.runs);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
if (!(Number.isInteger(players) && players >= 100 && players <= 99_000)) throw new Error('--players must be 100 to 99000 (the fake upstream remembers 100,000)');
if (!(Number.isInteger(runs) && runs >= 1 && runs <= 20)) throw new Error('--runs must be 1 to 20');
if (!(Number.isInteger(seconds) && seconds >= 1 && seconds <= 600)) throw new Error('--seconds must be 1 to 600');
if (!(Number.isInteger(connections) && connections >= 1 && connections <= 1024)) throw new Error('--connections must be 1 to 1024');
const WARM_UP_SECONDS = 3;

const service = await startBenchService({ nodeArgs: values['node-arg'], env: warmRenderEnv(players) });
const dir = mkdtempSync(path.join(os.tmpdir(), 'skinfarm-threads-'));
const measured: Array<{ rps: number; renders: number; ms: Map<string, number> }> = [];
try {
  await service.prepare(players);
  process.stderr.write(`fetching ${players} players' skins and capes through the service…\n`);
  await warmTextures(service.url, Array.from({ length: players }, (_, k) => k));
  // Each run its own slice of the players: none is drawn twice.
  const share = Math.floor(players / (runs + 1));
  for (let run = 0; run <= runs; run += 1) {
    const pathsFile = path.join(dir, `run-${run}.txt`);
    writeFileSync(pathsFile, `${Array.from({ length: share }, (_, i) => warmRenderPath(run * share + i)).join('\n')}\n`);
    const before = threadCpuOfTree(service.pid);
    const load = await runLoad({ url: service.url, pathsFile, seconds: run === 0 ? WARM_UP_SECONDS : seconds, connections, threads: 2, timeoutSeconds: 30 });
    const after = threadCpuOfTree(service.pid);
    if (load.requests > share) throw new Error(`run ${run} answered ${load.requests} requests over ${share} players: it came round its list; give more --players`);
    if (load.errors > 0 || load.non2xx > 0) throw new Error(`run ${run}: ${load.errors} errors, ${load.non2xx} answers not 2xx`);
    if (run > 0) measured.push({ rps: load.rps, renders: load.requests, ms: new Map([...threadSecondsBetween(before, after)].map(([key, cpu]) => [key, (cpu * 1000) / load.requests])) });
  }
} finally {
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}

const keys = [...new Set(measured.flatMap((m) => [...m.ms.keys()]))];
const rows = keys.map((key) => ({ key, runs: measured.map((m) => m.ms.get(key) ?? 0) }))
  .map((row) => ({ ...row, median: median(row.runs) }))
  .filter((row) => row.runs.some((v) => v >= 0.0005))
  .sort((a, b) => b.median - a.median);
const groups = [...new Set(rows.map((row) => row.key.split(':')[0]))].map((group) => {
  const runsOf = measured.map((_, i) => rows.filter((row) => row.key.startsWith(`${group}:`)).reduce((n, row) => n + row.runs[i], 0));
  return { group, runs: runsOf, median: median(runsOf) };
});
const totals = measured.map((_, i) => rows.reduce((n, row) => n + row.runs[i], 0));
const report = {
  machine: { date: new Date().toISOString(), cores: os.availableParallelism(), cpu: os.cpus()[0]?.model.trim(), node: process.version },
  options: { players, runs, seconds, connections, nodeArgs: values['node-arg'] },
  rps: measured.map((m) => m.rps),
  total: { runs: totals, median: median(totals) },
  groups,
  threads: rows,
};

if (values.json) {
  console.log(JSON.stringify(report, null, 2));
} else {
  const cells = (list: number[]) => list.map((v) => v.toFixed(3)).join(' | ');
  console.log(`${report.machine.date.slice(0, 16).replace('T', ' ')}: ${report.machine.cores} cores (${report.machine.cpu}), Node ${report.machine.node}; `
    + `warm renders of ${players} players, ${runs} runs of ${seconds} s at ${connections} connections: ${report.rps.join(', ')} renders/s`);
  console.log('');
  console.log(`| ms of CPU per render | ${measured.map((_, i) => `run ${i + 1}`).join(' | ')} | median |`);
  console.log(`|---|${measured.map(() => '---|').join('')}---|`);
  console.log(`| **all** | ${cells(totals)} | **${report.total.median.toFixed(3)}** |`);
  for (const g of groups) console.log(`| ${g.group} (process) | ${cells(g.runs)} | ${g.median.toFixed(3)} |`);
  for (const row of rows) console.log(`| ${row.key} | ${cells(row.runs)} | ${row.median.toFixed(3)} |`);
}
