// Search service benchmark on a generated synthetic index (1,000,000 records by default):
// index build time and memory, searches per second at function level (lookup only, main pass,
// main + cross pass), and over HTTP against the real service (`node api/main.ts`,
// SERVICES=search) with keys in the file store and, when redis-server is installed, in Redis.
//   node scripts/bench/search.ts [--records 1000000] [--seconds 5] [--concurrency 16]
import fs from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import { CROSS_FANOUT, MAIN_RECORD_LIMIT, runSearch } from '../../api/search/pipeline.ts';
import { domainAnalyser } from '../../api/search/sources/analysers/domain.ts';
import { emailAnalyser } from '../../api/search/sources/analysers/email.ts';
import { ipAnalyser } from '../../api/search/sources/analysers/ip.ts';
import { macAnalyser } from '../../api/search/sources/analysers/mac.ts';
import { phoneAnalyser } from '../../api/search/sources/analysers/phone.ts';
import { LocalIndexSource } from '../../api/search/sources/local.ts';
import type { TypedValue } from '../../api/search/types.ts';
import { parseQuery } from '../../api/search/detect.ts';
import { silentLogger } from '../../shared/log.ts';
import { echoErrors, launch, ON_FREE_PORTS, redisServerMissing, startRedis } from '../launch.ts';
import { sampleQueries, writeSyntheticData } from '../search-data.ts';
import { DEFAULT_REGION } from '../../api/search/values/phone.ts';

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '16' },
  },
});
const RECORDS = Number(args.records);
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);
const SEED = 42;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const mb = (bytes: number) => Math.round(bytes / 1048576);


async function timed(seconds: number, fn: () => Promise<unknown>): Promise<{ ops: number; perSecond: number }> {
  const until = performance.now() + seconds * 1000;
  let ops = 0;
  const started = performance.now();
  while (performance.now() < until) {
    await fn();
    ops += 1;
  }
  return { ops, perSecond: Math.round(ops / ((performance.now() - started) / 1000)) };
}

async function functionLevel(dataFile: string, queries: TypedValue[]) {
  gc();
  const before = process.memoryUsage();
  const local = new LocalIndexSource(dataFile, DEFAULT_REGION, silentLogger);
  const started = performance.now();
  await local.open();
  const buildMs = Math.round(performance.now() - started);
  local.close();
  // Array buffers are released a collection after their wrappers: settle before measuring.
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  const after = process.memoryUsage();
  const sources = [local, ipAnalyser, domainAnalyser, phoneAnalyser, macAnalyser, emailAnalyser];
  let q = 0;
  const next = () => queries[q++ % queries.length];
  const request = { signal: new AbortController().signal, limit: MAIN_RECORD_LIMIT };
  const lookup = await timed(SECONDS, () => local.search(next(), request));
  const main = await timed(SECONDS, () => runSearch(sources, next(), { timeoutMs: 8000, sourceTimeoutMs: 4000, crossFanout: 0, log: silentLogger }));
  const cross = await timed(SECONDS, () => runSearch(sources, next(), { timeoutMs: 8000, sourceTimeoutMs: 4000, crossFanout: CROSS_FANOUT, log: silentLogger }));
  return {
    buildMs,
    stats: local.stats!,
    heapMb: mb(after.heapUsed - before.heapUsed),
    externalMb: mb(after.external - before.external),
    rssMb: mb(after.rss),
    lookup: lookup.perSecond,
    main: main.perSecond,
    cross: cross.perSecond,
  };
}

function rssOf(pid: number): Promise<number> {
  return fs.readFile(`/proc/${pid}/status`, 'utf8').then((s) => Number(/VmRSS:\s+(\d+)/.exec(s)?.[1] ?? 0) * 1024, () => 0);
}

async function httpLevel(dataFile: string, queries: string[], redisUrl: string | null) {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-bench-search-'));
  const admin = randomBytes(24).toString('base64url');
  const started = performance.now();
  // Info level as in production: the access and audit lines are part of the cost measured.
  const service = await launch({
    ...ON_FREE_PORTS, SERVICES: 'search', LOG_LEVEL: 'info',
    SEARCH_DATA: dataFile, SEARCH_ADMIN_TOKEN: admin, SEARCH_RATE_LIMIT: '1000000', SEARCH_KEY_CONCURRENCY: '1000', DATA_DIR: dataDir, OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false',
    SESSION_SECRET: 'bench-session-secret-0123456789', ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
  }, { timeoutMs: 600_000, dropLogs: true, onLine: echoErrors });
  const startupMs = Math.round(performance.now() - started);
  const base = service.urls.search;
  try {
    const created = await fetch(`${base}/v1/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${admin}` }, body: JSON.stringify({ name: 'bench', plan: 'premium', searches_per_minute: 1_000_000 }) });
    const { key } = await created.json() as { key: string };
    const latencies: number[] = [];
    let failures = 0;
    let q = 0;
    const until = performance.now() + SECONDS * 1000;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const query = queries[q++ % queries.length];
        const sent = performance.now();
        const response = await fetch(`${base}/v1/search?query=${encodeURIComponent(query)}`, { headers: { 'x-api-key': key } });
        await response.arrayBuffer();
        if (response.status === 200) latencies.push(performance.now() - sent);
        else failures += 1;
      }
    }));
    const seconds = (performance.now() - t0) / 1000;
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]);
    return { store: redisUrl ? 'redis' : 'file', startupMs, perSecond: Math.round(latencies.length / seconds), p50: pct(0.5), p99: pct(0.99), failures, rssMb: mb(await rssOf(service.process.pid!)) };
  } finally {
    await service.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

const dataFile = path.join(os.tmpdir(), `skinfarm-search-bench-${RECORDS}-${SEED}.jsonl`);
const existing = await fs.stat(dataFile).catch(() => null);
if (!existing) {
  const started = performance.now();
  await writeSyntheticData(dataFile, RECORDS, { seed: SEED });
  console.log(`generated ${RECORDS} records in ${Math.round(performance.now() - started)} ms -> ${dataFile}`);
}
const size = (await fs.stat(dataFile)).size;
const queries = sampleQueries(RECORDS, 2000, SEED);
const typed = queries.map((q) => parseQuery(q, 'auto'));
console.log(`data: ${RECORDS} records, ${mb(size)} MB JSONL; ${queries.length} sampled queries (e-mail, phone, user name, IPv4)`);

const fn = await functionLevel(dataFile, typed);
console.log(`index: built in ${fn.buildMs} ms, ${fn.stats.values} values; rows ${mb(fn.stats.row_bytes)} MB, postings ${mb(fn.stats.index_bytes)} MB; heap +${fn.heapMb} MB, buffers +${fn.externalMb} MB, process RSS ${fn.rssMb} MB`);
console.log(`function level: ${fn.lookup}/s index lookups, ${fn.main}/s searches (main pass), ${fn.cross}/s searches (main + cross pass)`);

const redis = redisServerMissing() ? null : await startRedis();
for (const url of [null, redis?.url ?? null].filter((u, i) => i === 0 || u)) {
  const h = await httpLevel(dataFile, queries, url);
  console.log(`http (${h.store} keys, ${CONCURRENCY} concurrent, main + cross pass): ${h.perSecond}/s, p50 ${h.p50} ms, p99 ${h.p99} ms, ${h.failures} failed; service started in ${h.startupMs} ms, RSS ${h.rssMb} MB`);
}
await redis?.stop();
