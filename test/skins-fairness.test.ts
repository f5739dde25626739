// One client's images must not starve another's (issue #38): uncached images cost their client's
// work budget by pixels and format (cached ones nothing), and every encode, a still's or a
// turntable's, waits in a queue that takes clients in turn, one encode of each at a time.
// Clients are told apart by X-Forwarded-For (TRUST_PROXY=true). Nothing here depends on speed:
// budgets are counted, and the queue's state is read from /metrics before each step.
import test from 'ava';
import { createClient } from '@redis/client';
import { stillCost } from '../api/skins/image-cost.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';
import { until } from './helpers/poll.ts';
import { redisUnavailableReason, SHARED_COUNT_ENV, startRedis } from './helpers/redis.ts';
import { startInOneWindow } from './helpers/rate-window.ts';

const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });

// Two 512 px AVIF avatars and fifty 64 px PNG ones, exactly.
const AVIF_512 = stillCost({ kind: 'avatar', size: 512 }, 'avif');
const PNG_64 = stillCost({ kind: 'avatar', size: 64 }, 'png');
const BUDGET = 2 * AVIF_512 + 50 * PNG_64;

let budgeted: SkinsHarness;
let queued: SkinsHarness;
test.before(async () => {
  [budgeted, queued] = await Promise.all([
    // Avatars only: drawn by sharp, no render farm needed.
    startSkins({ TRUST_PROXY: 'true', IMAGE_WORK_BUDGET: String(BUDGET) }),
    startSkins({ TRUST_PROXY: 'true', RENDER_WORKERS: '1' }),
  ]);
});
test.after.always(async () => {
  await Promise.all([budgeted?.stop(), queued?.stop()]);
});

test('a 512 px AVIF costs its client far more than a 64 px PNG', (t) => {
  t.true(AVIF_512 > 100 * PNG_64, `${AVIF_512} against ${PNG_64}`);
});

test.serial('uncached images cost their client by pixels and format; cached ones cost nothing; a flood is answered 429 while another client is served', async (t) => {
  await startInOneWindow(30_000);
  const flooder = '198.51.100.1';
  const other = '198.51.100.2';
  t.is((await budgeted.get('/v1/avatar/gen_1/512.avif', from(flooder))).status, 200);
  // The same image again, cached, ten times: free (ten uncached ones would be far past the budget).
  for (let i = 0; i < 10; i += 1) {
    const again = await budgeted.get('/v1/avatar/gen_1/512.avif', from(flooder));
    t.is(again.status, 200);
    t.is(again.headers.get('x-cache'), 'HIT');
  }
  t.is((await budgeted.get('/v1/avatar/gen_2/512.avif', from(flooder))).status, 200);
  // What is left is fifty small PNGs' worth.
  for (let i = 0; i < 50; i += 1) t.is((await budgeted.get(`/v1/avatar/gen_${100 + i}/64`, from(flooder))).status, 200, `small avatar ${i}`);
  const limited = await budgeted.get('/v1/avatar/gen_3/512.avif', from(flooder));
  t.is(limited.status, 429);
  t.like(limited.json, { code: 'rate_limited', success: false, data: null });
  t.true(Number(limited.headers.get('retry-after')) >= 1);
  t.is(limited.headers.get('x-ratelimit-limit'), String(BUDGET));
  t.is((await budgeted.get('/v1/avatar/gen_4/64', from(flooder))).status, 429, 'even a small one, now');
  // A cached image is still served to that client; another client draws its own.
  t.is((await budgeted.get('/v1/avatar/gen_2/512.avif', from(flooder))).status, 200);
  for (const name of ['gen_3', 'gen_5']) t.is((await budgeted.get(`/v1/avatar/${name}/512.avif`, from(other))).status, 200);
  t.is((await budgeted.get('/v1/avatar/gen_6/64.webp', from(other))).status, 200);
});

const noRedis = redisUnavailableReason();
(noRedis ? test.skip : test.serial)('with Redis, instances charge one budget: each image adds its cost to the shared count', async (t) => {
  const redis = await startRedis();
  const env = { TRUST_PROXY: 'true', REDIS_URL: redis.url, ...SHARED_COUNT_ENV, IMAGE_WORK_BUDGET: String(2 * AVIF_512 + PNG_64) };
  const [one, two] = await Promise.all([startSkins(env), startSkins(env)]);
  const client = createClient({ url: redis.url });
  try {
    await client.connect();
    await startInOneWindow(30_000);
    const ip = '198.51.100.40';
    t.is((await one.get('/v1/avatar/gen_40/512.avif', from(ip))).status, 200);
    t.is((await two.get('/v1/avatar/gen_41/512.avif', from(ip))).status, 200);
    const [key] = await client.keys(`skinfarm:rl:work:${ip}:*`);
    t.is(Number(await client.get(key)), 2 * AVIF_512);
    t.true(await client.pTTL(key) > 0, 'the window\'s count expires');
    t.is((await one.get('/v1/avatar/gen_42/64', from(ip))).status, 200, 'what is left is one small PNG');
    t.is((await two.get('/v1/avatar/gen_43/64', from(ip))).status, 429);
  } finally {
    await client.quit();
    await Promise.all([one.stop(), two.stop()]);
    await redis.stop();
  }
});

/** The encode queue's gauges, from /metrics. */
async function encodeQueue(h: SkinsHarness): Promise<{ running: number; waiting: number }> {
  const text = (await h.get('/metrics')).text;
  const read = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { running: read('skinfarm_encode_queue_running'), waiting: read('skinfarm_encode_queue_waiting') };
}

/**
 * Sends `count` uncached AVIF avatars of `ip` at once (their PNGs drawn and cached first, so each
 * goes straight to its encode) and returns when all but one wait in the queue. 360 px: AVIF at
 * its full effort (below AVIF_EFFORT_2_MAX_PIXELS), a few tenths of a second each.
 */
async function floodEncodes(h: SkinsHarness, ip: string, first: number, count: number, answered: string[]) {
  const names = Array.from({ length: count }, (_, i) => `gen_${first + i}`);
  for (const name of names) t200(await h.get(`/v1/avatar/${name}/360`, from(ip)));
  const flood = names.map((name) => h.get(`/v1/avatar/${name}/360.avif`, from(ip)).then((r) => {
    answered.push(name);
    return r;
  }));
  await until('the flood waiting in the encode queue', () => encodeQueue(h), (q) => q.waiting >= count - 1);
  return flood;
}

function t200(r: { status: number; text: string }): void {
  if (r.status !== 200) throw new Error(`${r.status}: ${r.text.slice(0, 200)}`);
}

test.serial('encodes take clients in turn: another client\'s encode does not wait behind a flood', async (t) => {
  const answered: string[] = [];
  t200(await queued.get('/v1/avatar/gen_900/64', from('198.51.100.20')));
  const flood = await floodEncodes(queued, '198.51.100.10', 1000, 8, answered);
  t.like(await encodeQueue(queued), { running: 1 }, 'one encode of the flooding client at a time');
  const small = await queued.get('/v1/avatar/gen_900/64.webp', from('198.51.100.20'));
  t.is(small.status, 200);
  t.true(answered.length <= 2, `the other client's avatar came after ${answered.length} of the flood's 8 encodes`);
  for (const r of await Promise.all(flood)) t.is(r.status, 200);
});

test.serial('a turntable\'s encode waits in the queue, in its client\'s turn', async (t) => {
  const ip = '198.51.100.30';
  const answered: string[] = [];
  const flood = await floodEncodes(queued, ip, 2000, 12, answered);
  const turntable = queued.get('/v1/turntable/gen_2100/16?frames=8&format=gif', from(ip)).then((r) => {
    answered.push('turntable');
    return r;
  });
  // The queue holds more than the flood's unanswered encodes: the turntable's is among them.
  await until('the turntable in the encode queue', async () => ({ ...await encodeQueue(queued), unanswered: 12 - answered.filter((n) => n !== 'turntable').length }),
    (q) => q.running + q.waiting > q.unanswered);
  t.is((await turntable).status, 200);
  for (const r of await Promise.all(flood)) t.is(r.status, 200);
  // Its encode starts when the client's last AVIF encode ends: the two answers may cross.
  t.true(answered.indexOf('turntable') >= 11, `one encode of a client at a time: the turntable came after ${answered.indexOf('turntable')} of the same client's 12 encodes`);
});
