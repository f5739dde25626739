// wrk against the skins service and, in the same run, a bare node:http server sending the same
// bytes (the ceiling), alternating, each client address new per request (X-Forwarded-For,
// TRUST_PROXY=true). Starts the fake upstream and the service (no Chromium) itself.
//
//   node scripts/bench/hot-path.ts hot|cold-avatar [--rounds 3] [--seconds 5] [--connections 64] [--path /v1/avatar/gen_1/128]
//
// hot: GET --path, cached (/v1/avatar/gen%5F1/128 is the same image through the Koa stack: the
// fast path leaves percent-encoded names to Koa). cold-avatar: a new (player, size 9-512) each
// request. Prints every run (req/s and the server's CPU time per request), the medians and the
// load average.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { startFakeUpstream } from '../fake-upstream/server.ts';
import { launch, ON_FREE_PORTS } from '../launch.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { path: { type: 'string', default: '/v1/avatar/gen_1/128' }, rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '5' }, connections: { type: 'string', default: '64' } },
});
const scenario = positionals[0] ?? 'hot';
const dir = mkdtempSync(path.join(os.tmpdir(), 'hot-path-'));

// Per thread its own counter range: every request a new client address (and, cold, a new image).
const xff = `local n = 0
local base = 0
function setup(thread) thread:set("base", math.random(0, 2^20)) end
function request()
  n = n + 1
  local c = base + n
  local headers = { ["X-Forwarded-For"] = string.format("198.18.%d.%d", math.floor(c / 256) % 256, c % 256) }
  ${scenario === 'cold-avatar'
    ? 'return wrk.format("GET", string.format("/v1/avatar/gen_%d/%d", c, 9 + (c * 7) % 504), headers)'
    : 'return wrk.format(nil, nil, headers)'}
end
`;
writeFileSync(path.join(dir, 'xff.lua'), xff);

/** CPU seconds (user + system) a process has used: on a shared machine, CPU per request is steadier than req/s. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Run { rps: number; cpuUs: number }

// Asynchronous: the fake upstream lives in this process and must keep answering.
async function wrk(url: string, pid: number): Promise<Run> {
  const cpu = cpuSeconds(pid);
  const { stdout: out } = await promisify(execFile)('wrk', ['-t2', `-c${values.connections}`, `-d${values.seconds}s`, '-s', path.join(dir, 'xff.lua'), url], { encoding: 'utf8' });
  const bad = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  if (bad) console.log(`  ! ${bad[1]} non-2xx answers`);
  const requests = Number(/(\d+) requests in/.exec(out)![1]);
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]), cpuUs: Math.round(((cpuSeconds(pid) - cpu) / requests) * 1e7) / 10 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const fake = await startFakeUpstream();
const app = await launch({
  ...ON_FREE_PORTS, SERVICES: 'skins', LOG_LEVEL: 'info', ACCESS_LOG: 'false', TRUST_PROXY: 'true', RENDER_WORKERS: '0', ...fake.env,
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(CACHE_|ACCESS_LOG|REDIS_URL|NODE_OPTIONS)/.test(k))) as Record<string, string>,
  OFFICIAL_NAMES_BUDGET: 'off', OFFICIAL_PROFILES_BUDGET: 'off', EXTERNAL_NAMES_BUDGET: 'off', EXTERNAL_PROFILES_BUDGET: 'off',
}, { dropLogs: true });
const base = app.urls.skins;
const png = Buffer.from(await (await fetch(`${base}/v1/avatar/gen_1/128`)).arrayBuffer());
// Its own process, as the service has its own.
writeFileSync(path.join(dir, 'image.png'), png);
const bare = spawn(process.execPath, ['-e', `const png = require('fs').readFileSync(${JSON.stringify(path.join(dir, 'image.png'))});
const server = require('http').createServer((req, res) => { res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }); res.end(png); });
server.listen(0, '127.0.0.1', () => console.log(server.address().port));`], { stdio: ['ignore', 'pipe', 'inherit'] });
const [port] = await once(bare.stdout!, 'data');
const bareUrl = `http://127.0.0.1:${String(port).trim()}/`;

const servicePid = app.process.pid!;
const serviceUrl = scenario === 'cold-avatar' ? base : `${base}${values.path}`;
const service: Run[] = [];
const ceiling: Run[] = [];
const show = (r: Run) => `${r.rps} req/s, ${r.cpuUs} µs CPU/request`;
try {
  // JIT warm-up of both servers, not counted.
  await wrk(serviceUrl, servicePid);
  if (scenario === 'hot') await wrk(bareUrl, bare.pid!);
  for (let round = 0; round < Number(values.rounds); round += 1) {
    service.push(await wrk(serviceUrl, servicePid));
    if (scenario === 'hot') ceiling.push(await wrk(bareUrl, bare.pid!));
    console.log(`round ${round + 1}: service ${show(service.at(-1)!)}${scenario === 'hot' ? `; bare ${show(ceiling.at(-1)!)}` : ''}`);
  }
  const med = (runs: Run[]): Run => ({ rps: median(runs.map((r) => r.rps)), cpuUs: median(runs.map((r) => r.cpuUs)) });
  const [s, c] = [med(service), scenario === 'hot' ? med(ceiling) : null];
  const ratio = c ? `; ratio ${(s.rps / c.rps).toFixed(2)} by req/s, ${(c.cpuUs / s.cpuUs).toFixed(2)} by CPU/request` : '';
  console.log(`${scenario}: median service ${show(s)}${c ? `; bare ${show(c)}` : ''}${ratio}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
} finally {
  bare.kill();
  await app.stop();
  await fake.close();
}
