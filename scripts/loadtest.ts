// Load scenarios against a skins service on this machine (loopback only, bounded in requests and
// seconds). Without --url it starts the fake upstream and the service itself.
//
//   npm run loadtest -- embed|api|cold-render|cold-avatar|avatar-hot|hot-vs-bare [--seconds 10] [--connections 64]
//                       [--players 1000 (cold-render: 20)] [--kind render|cube|head|body] [--url http://127.0.0.1:3000] [--record]
//
// Prints req/s, latency percentiles and errors; --record appends a row to docs/benchmarks.md.
import { appendFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startFakeUpstream } from './fake-upstream/server.ts';
import { startApp } from '../test/helpers/service.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    players: { type: 'string' },
    kind: { type: 'string', default: 'render' },
    url: { type: 'string' },
    record: { type: 'boolean', default: false },
  },
});
const scenario = positionals[0] ?? 'embed';
const seconds = Math.min(120, Number(values.seconds));
const connections = Math.min(1024, Number(values.connections));
// Cold renders are about drawing, not about first lookups: a few players, a new angle each time.
const players = Math.max(1, Number(values.players ?? (scenario === 'cold-render' ? 20 : 1000)));
const kind = ['render', 'cube', 'head', 'body'].includes(values.kind!) ? values.kind! : 'render';

function assertLoopback(url: string): void {
  const host = new URL(url).hostname;
  if (!['127.0.0.1', 'localhost', '[::1]', '::1'].includes(host)) throw new Error(`refusing to load ${host}: loopback only`);
}

interface Summary { scenario: string; rps: number; p50: number; p975: number; p99: number; errors: number; non2xx: number; requests: number }

/**
 * Each request claims one of 65,536 client addresses (RFC 2544 benchmark range, in a header
 * only), so the per-IP rate limit stays in the measured path without limiting the run (the
 * service must trust X-Forwarded-For: TRUST_PROXY=true).
 */
let client = 0;
function asManyClients(opts: autocannon.Options): autocannon.Options {
  const given = opts.requests?.[0]?.setupRequest;
  const setup = typeof given === 'function' ? given : null;
  return {
    ...opts,
    requests: [{
      ...(opts.requests?.[0] ?? {}),
      setupRequest: (req, context) => {
        client = (client + 1) % 65_536;
        const next = setup ? setup(req, context) : req;
        return { ...next, headers: { ...(next.headers ?? {}), 'x-forwarded-for': `198.18.${client >> 8}.${client & 255}` } };
      },
    }],
  };
}

async function run(name: string, options: autocannon.Options): Promise<Summary> {
  assertLoopback(String(options.url));
  const opts = asManyClients(options);
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({ connections, duration: seconds, ...opts }, (error, res) => (error ? reject(error) : resolve(res)));
    autocannon.track(instance, { renderProgressBar: process.stdout.isTTY, renderResultsTable: false, renderLatencyTable: false });
  });
  const summary = {
    scenario: name,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p975: result.latency.p97_5,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    requests: result.requests.total,
  };
  console.log(`${name}: ${summary.rps} req/s, p50 ${summary.p50} ms, p97.5 ${summary.p975} ms, p99 ${summary.p99} ms, errors ${summary.errors}, non-2xx ${summary.non2xx} (${summary.requests} requests)`);
  return summary;
}

function record(rows: Summary[]): void {
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const cpu = os.cpus()[0]?.model ?? 'cpu';
  const lines = rows.map((r) => `| ${when} | ${r.scenario} | ${connections} | ${seconds} s | ${r.rps} | ${r.p50} | ${r.p975} | ${r.p99} | ${r.errors + r.non2xx} | ${os.availableParallelism()}x ${cpu} |`);
  appendFileSync(path.join(root, 'docs/benchmarks.md'), `${lines.join('\n')}\n`);
}

/** The same PNG bytes from a bare node:http server: the ceiling for a hot cached image. */
async function bareServer(png: Buffer): Promise<{ url: string; close(): void }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
    res.end(png);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, close: () => server.close() };
}

const fake = values.url ? null : await startFakeUpstream();
const app = values.url ? null : await startApp({
  SERVICES: 'skins', LOG_LEVEL: 'info', ACCESS_LOG: 'false', TRUST_PROXY: 'true', RENDER_WORKERS: '2', ...fake!.env,
  // Tuning knobs given to this script reach the service it starts.
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(RENDER_|CACHE_|MAX_EVENT_LOOP)/.test(k))) as Record<string, string>,
  OFFICIAL_NAMES_BUDGET: 'off', OFFICIAL_PROFILES_BUDGET: 'off', EXTERNAL_NAMES_BUDGET: 'off', EXTERNAL_PROFILES_BUDGET: 'off',
});
const base = values.url ?? app!.urls.skins;
const name = (i: number) => `gen_${i}`;
const rows: Summary[] = [];
let counter = 0;

try {
  switch (scenario) {
    case 'avatar-hot':
      await fetch(`${base}/v1/avatar/${name(1)}/64`);
      rows.push(await run('avatar-hot', { url: `${base}/v1/avatar/${name(1)}/64` }));
      break;
    case 'hot-vs-bare': {
      const png = Buffer.from(await (await fetch(`${base}/v1/avatar/${name(1)}/64`)).arrayBuffer());
      const bare = await bareServer(png);
      rows.push(await run('hot-image', { url: `${base}/v1/avatar/${name(1)}/64` }));
      rows.push(await run('bare-node-http', { url: bare.url }));
      bare.close();
      console.log(`hot image / bare node http: ${Math.round((rows[0].rps / rows[1].rps) * 100)}%`);
      break;
    }
    case 'cold-avatar':
      // Every request a new (player, size 64-256) pair: draw and encode each time.
      rows.push(await run('cold-avatar', {
        url: base,
        requests: [{
          setupRequest: (req) => {
            counter += 1;
            return { ...req, path: `/v1/avatar/${name(counter % players)}/${64 + (Math.floor(counter / players) % 193)}` };
          },
        }],
      }));
      break;
    case 'api':
      rows.push(await run('api', {
        url: base,
        requests: [{
          setupRequest: (req) => {
            counter += 1;
            const i = counter % players;
            const paths = [`/v1/player/${name(i)}`, `/v1/uuid/${name(i)}`, `/v1/batch?names=${name(i)},${name(i + 1)},${name(i + 2)}`];
            return { ...req, path: paths[counter % paths.length] };
          },
        }],
      }));
      break;
    case 'cold-render':
      // body has no angles: a new background colour each time keeps it cold.
      rows.push(await run(`cold-${kind}`, {
        url: base,
        requests: [{
          setupRequest: (req) => {
            counter += 1;
            const view = kind === 'body' ? `256?bg=${counter.toString(16).padStart(6, '0')}` : `256?yaw=${(counter % 360) - 180}&pitch=${(Math.floor(counter / 360) % 180) - 90}`;
            return { ...req, path: `/v1/${kind}/${name(counter % players)}/${view}` };
          },
        }],
      }));
      break;
    case 'embed': {
      // 90% cached images of `players` players (warmed first: every kind of every player), 10% cold
      // renders of those players at new angles. Cold request n gets yaw -180 + (n mod 36,000) / 100
      // and the pitch after it, so none repeats within 6.5 million: whole-degree angles came round
      // again after ~6,500 cold requests, and players whose drawn skins look alike then hit the
      // cache (12 s into a run, 40% of the "cold" requests by 40 s).
      const kinds = ['avatar', 'render', 'head', 'body'];
      const cachedPath = (n: number) => `/v1/${kinds[n % 4]}/${name(Math.floor(n / 4) % players)}/64`;
      console.log(`warming ${players * 4} images…`);
      for (let next = 0; next < players * 4;) {
        await Promise.all(Array.from({ length: 32 }, () => (next < players * 4 ? fetch(`${base}${cachedPath(next++)}`, { headers: { 'x-forwarded-for': `198.19.${next >> 8 & 255}.${next & 255}` } }).then((r) => r.arrayBuffer()) : null)));
      }
      rows.push(await run('embed', {
        url: base,
        requests: [{
          setupRequest: (req) => {
            counter += 1;
            if (counter % 10 !== 0) return { ...req, path: cachedPath(counter % (players * 4)) };
            const n = counter / 10;
            const angles = `?yaw=${((n % 36_000) / 100 - 180).toFixed(2)}&pitch=${(Math.floor(n / 36_000) % 181) - 90}`;
            return { ...req, path: `/v1/render/${name(n % players)}/128${angles}` };
          },
        }],
      }));
      break;
    }
    default:
      throw new Error(`unknown scenario ${scenario} (embed, api, cold-render, cold-avatar, avatar-hot, hot-vs-bare)`);
  }
  if (values.record) record(rows);
} finally {
  await app?.stop();
  await fake?.close();
}
