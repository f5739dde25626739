// One client's encodes must not starve another's (issue #38). Starts the fake upstream and the
// skins service (TRUST_PROXY=true: clients told apart by X-Forwarded-For), then:
//   1. idle: a client fetches uncached 64 px WebP avatars one after another;
//   2. flood: from the start of a rate-limit window, another client fetches uncached 512 px AVIF
//      bodies, --flood-connections at once, until its work budget answers 429 (its full budget),
//      while the first client fetches uncached 64 px WebP avatars as in 1.
// Prints the first client's p50/p99 in both phases and their ratio (issue #38's target: the p99
// within 3x of idle), and what the flood got. Every image is of a player not asked for before.
// The avatars come one at a time from 16 addresses in turn: one address would pass its image
// quota (240 a minute) at these speeds; none of them is the flooder.
//
//   npm run bench:fairness -- [--avatars 200] [--flood-connections 8] [--budget N]
// Variables set in the environment reach the service (RENDER_WORKERS=2 npm run bench:fairness).
import os from 'node:os';
import { parseArgs } from 'node:util';
import { startFakeUpstream } from '../fake-upstream/server.ts';
import { launch, ON_FREE_PORTS } from '../launch.ts';

const { values } = parseArgs({
  options: {
    avatars: { type: 'string', default: '200' },
    'flood-connections': { type: 'string', default: '8' },
    budget: { type: 'string' },
  },
});
const AVATARS = Number(values.avatars);
const FLOOD_CONNECTIONS = Number(values['flood-connections']);
const victim = (i: number) => `203.0.113.${100 + (i % 16)}`;
const FLOODER = '203.0.113.1';
// Disjoint players: the idle phase, the flood phase's avatars, the flood's bodies.
const IDLE_FROM = 0;
const BUSY_FROM = 5000;
const FLOOD_FROM = 10_000;
const PLAYERS = 15_000;

const fake = await startFakeUpstream();
console.log(`preparing ${PLAYERS} generated players in the fake upstream...`);
await fake.prepareGenerated(PLAYERS);
const app = await launch({
  ...ON_FREE_PORTS, SERVICES: 'skins', LOG_LEVEL: 'info', ACCESS_LOG: 'false', TRUST_PROXY: 'true', ...fake.env,
  OFFICIAL_NAMES_BUDGET: 'off', OFFICIAL_PROFILES_BUDGET: 'off',
  ...(values.budget ? { IMAGE_WORK_BUDGET: values.budget } : {}),
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(RENDER_|IMAGE_|CACHE_|NODE_OPTIONS)/.test(k))) as Record<string, string>,
}, { timeoutMs: 120_000, dropLogs: true });
const base = app.urls.skins;

async function get(path: string, ip: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, { headers: { 'x-forwarded-for': ip } });
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * q) - 1)];
const ms = (x: number) => (x < 10 ? x.toFixed(1) : Math.round(x).toString());

/** The victim's avatars, one at a time, from player `from` on, while `going()` holds (and at most `max`). */
async function avatars(from: number, max: number, going: () => boolean): Promise<number[]> {
  const took: number[] = [];
  for (let i = 0; i < max && going(); i += 1) {
    const r = await get(`/v1/avatar/gen_${from + i}/64.webp`, victim(i));
    if (r.status !== 200) throw new Error(`avatar answered ${r.status}`);
    took.push(r.ms);
  }
  return took;
}

try {
  // Shaders compile on each page's first frame; the encoders load once: not measured.
  const warm = await Promise.all([64, 65, 66, 67].map((size) => get(`/v1/body/Knight/${size}.avif`, '203.0.113.9')));
  if (warm.some((r) => r.status !== 200)) throw new Error('warm-up failed');
  const idle = await avatars(IDLE_FROM, AVATARS, () => true);

  // The flood starts with a window, so its whole budget is there to spend.
  const leftMs = 60_000 - (Date.now() % 60_000);
  console.log(`waiting ${Math.round(leftMs / 1000)} s for the next rate-limit window...`);
  await new Promise((resolve) => setTimeout(resolve, leftMs + 50));
  let next = FLOOD_FROM;
  let flooding = FLOOD_CONNECTIONS;
  const flood = { served: 0, limited: 0, overloaded: 0, other: 0, ms: [] as number[] };
  const started = performance.now();
  const floodLoop = async () => {
    for (;;) {
      const r = await get(`/v1/body/gen_${next++}/512.avif`, FLOODER);
      if (r.status === 200) {
        flood.served += 1;
        flood.ms.push(r.ms);
      } else if (r.status === 429) {
        flood.limited += 1;
        break;
      } else if (r.status === 503) flood.overloaded += 1;
      else flood.other += 1;
    }
    flooding -= 1;
  };
  const [busy] = await Promise.all([
    avatars(BUSY_FROM, Infinity, () => flooding > 0),
    ...Array.from({ length: FLOOD_CONNECTIONS }, floodLoop),
  ]);
  const floodSeconds = (performance.now() - started) / 1000;

  const row = (label: string, xs: number[]) => `| ${label} | ${xs.length} | ${ms(pct(xs, 0.5))} | ${ms(pct(xs, 0.99))} | ${ms(Math.max(...xs))} |`;
  console.log('');
  console.log(`${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${os.availableParallelism()} cores (${os.cpus()[0]?.model.trim()}), load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} at the end, Node ${process.version}, RENDER_WORKERS ${process.env.RENDER_WORKERS ?? 'default'}, IMAGE_WORK_BUDGET ${values.budget ?? 'default'}`);
  console.log('');
  console.log('| the other client\'s uncached 64 px WebP avatars | requests | p50 ms | p99 ms | max ms |');
  console.log('|---|---|---|---|---|');
  console.log(row('idle service', idle));
  console.log(row('during the flood', busy));
  console.log('');
  console.log(`p99 during the flood / idle p99: ${(pct(busy, 0.99) / pct(idle, 0.99)).toFixed(2)} (target: at most 3)`);
  console.log(`flood: ${flood.served} uncached 512 px AVIF bodies served in ${floodSeconds.toFixed(1)} s (p50 ${ms(pct(flood.ms, 0.5))} ms, p99 ${ms(pct(flood.ms, 0.99))} ms over ${FLOOD_CONNECTIONS} connections), then 429 (${flood.limited}); 503: ${flood.overloaded}, other: ${flood.other}`);
} finally {
  await app.stop();
  await fake.close();
}
