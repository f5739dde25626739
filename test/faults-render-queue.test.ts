// Render nodes failing under load, over a real RabbitMQ (issue #45): a node killed (SIGKILL) or
// hung (SIGSTOP: the broker closes its connection when its heartbeats stop, about 10 s), the broker
// lost under load (a TCP proxy between instance and broker cut, and the vhost's connections closed
// with `rabbitmqctl close_all_connections`: what a broker restart does to its clients, without
// restarting the machine's broker under other tests), and an API instance
// killed with jobs queued (they expire on the node, unrendered), and a broker that is unreachable
// when an instance starts (a TCP proxy between them, cut, then restored). Two nodes of one page each, one
// skins instance; every image answered must be the one drawn before the fault.
// Real broker, nodes, Chromium, service and fake upstream; the tests share them, in order.
import test, { type ExecutionContext } from 'ava';
import { drawSkin } from '../scripts/fake-upstream/skin-art.ts';
import type { RunningService } from '../scripts/launch.ts';
import { invisibleVariant } from './helpers/png.ts';
import { until } from './helpers/poll.ts';
import { tcpProxy } from './helpers/postgres.ts';
import { AMQP_URL, createVhost, startRenderNode, type TestVhost } from './helpers/rabbitmq.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let vhost: TestVhost;
let nodes: RunningService[];
let h: SkinsHarness;
let skin: Buffer;
let expected: Buffer;
/** Each upload a new variant (the same picture, a new cache key), so every one is drawn. */
let variant = 0;

const NODE_ENV = { RENDER_WORKERS: '1' };
/** Generous: a job waiting for a hung node's connection to be closed (about 10 s) is not a timeout. */
const API_ENV = { RENDER_TIMEOUT_MS: '60000', UPLOADS_PER_CLIENT: '64' };

test.before(async () => {
  vhost = await createVhost();
  skin = await drawSkin({ seed: 45 });
  [h, ...nodes] = await Promise.all([startSkins({ RENDER_QUEUE_URL: vhost.url, ...API_ENV }), startRenderNode(vhost.url, NODE_ENV), startRenderNode(vhost.url, NODE_ENV)]);
  await until('both nodes consume', () => vhost.queue(), (q) => q.consumerCount === 2);
  const first = await upload(h);
  if (first.status !== 200) throw new Error(first.text);
  expected = first.bytes;
});
test.after.always(async () => {
  await Promise.all([h?.stop(), ...(nodes ?? []).map((n) => n.stop())]);
  await vhost?.drop();
});

async function upload(on: SkinsHarness) {
  variant += 1;
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(await invisibleVariant(skin, variant))], { type: 'image/png' }), 'skin.png');
  form.set('yaw', '30');
  return on.get('/v1/render/64', { method: 'POST', body: form });
}

/** `count` uploads at once; once the first is answered (the nodes are drawing), `fault` runs. Resolves with every answer. */
async function underLoad(count: number, fault: () => Promise<void> | void) {
  const load = Array.from({ length: count }, () => upload(h));
  await Promise.race(load);
  await fault();
  return Promise.all(load);
}

interface Reported { pid: number; seen_ms_ago: number; jobs: { done: number; expired: number; requeued: number } }

/** The nodes' reports, as the skins instance shows them. */
const reported = async () => (await h.get('/v1/status')).json.data.render.nodes as Reported[];

/** Reports of both nodes received after `since` (ms since the epoch), so they count every job answered before it. */
async function reportedAfter(since: number): Promise<Reported[]> {
  return until('reports after the last answer', async () => {
    const asked = Date.now();
    return (await reported()).filter((n) => asked - n.seen_ms_ago > since);
  }, (fresh) => fresh.length === 2);
}

function allDrawnRight(t: ExecutionContext, answers: Array<{ status: number; bytes: Buffer; text: string }>): void {
  t.deepEqual(answers.filter((a) => a.status !== 200).map((a) => a.text.slice(0, 160)), [], 'no request fails');
  t.true(answers.every((a) => a.status !== 200 || a.bytes.equals(expected)), 'every image is the one drawn before');
}

test.serial('a node killed (SIGKILL) while requests are in flight: the other takes its jobs, no request fails', async (t) => {
  const [victim] = nodes;
  const answers = await underLoad(24, () => void victim.process.kill('SIGKILL'));
  allDrawnRight(t, answers);
  nodes[0] = await startRenderNode(vhost.url, NODE_ENV);
  await until('two consumers again', () => vhost.queue(), (q) => q.consumerCount === 2);
});

test.serial('a node that hangs (SIGSTOP): the broker closes its connection and its jobs are drawn by the other node', async (t) => {
  const [hung, other] = nodes;
  const doneBefore = (await reportedAfter(Date.now())).find((n) => n.pid === other.process.pid)!.jobs.done;
  const answers = await underLoad(24, () => void hung.process.kill('SIGSTOP'));
  t.teardown(() => { hung.process.kill('SIGCONT'); });
  allDrawnRight(t, answers);
  const after = await until('the other node reports its jobs', reported, (r) => (r.find((n) => n.pid === other.process.pid)?.jobs.done ?? 0) > doneBefore);
  t.log({ before: doneBefore, after: after.find((n) => n.pid === other.process.pid)?.jobs });
  hung.process.kill('SIGCONT');
  // Once running again it finds its connection closed and makes a new one.
  await until('the hung node consumes again', () => vhost.queue(), (q) => q.consumerCount === 2, 60_000);
  t.is((await upload(h)).status, 200);
});

test.serial('the broker lost under load: requests in flight complete or fail at once with 503, then renders work again without a restart', async (t) => {
  // The instance reaches the broker through a proxy, cut at once (a restart's reset connections, as
  // the instance sees them); the nodes are cut too, with rabbitmqctl, as a restart cuts everyone.
  const proxy = await tcpProxy(new URL(AMQP_URL));
  t.teardown(() => proxy.close());
  const via = await startSkins({ RENDER_QUEUE_URL: proxy.url(vhost.url), ...API_ENV });
  t.teardown(() => via.stop());
  await until('the instance sees both nodes', () => via.get('/v1/status'), (r) => r.json.data.render.queue.consumers === 2);
  const load = Array.from({ length: 48 }, () => upload(via));
  await Promise.race(load);
  await proxy.cut();
  const answers = await Promise.all(load);
  for (const a of answers) {
    if (a.status === 200) t.true(a.bytes.equals(expected));
    else t.like({ status: a.status, code: JSON.parse(a.text).code, retry: Boolean(a.headers.get('retry-after')) }, { status: 503, code: 'render_unavailable', retry: true }, a.text.slice(0, 160));
  }
  t.log(`${answers.filter((a) => a.status === 200).length} of ${answers.length} completed, the others refused at once`);
  await via.app.waitForLog((e) => e.msg === 'lost the render queue broker; reconnecting', 30_000);
  await vhost.cutConnections();
  await proxy.restore();
  for (const instance of [via, h]) {
    const back = await until('a render after the cut', () => upload(instance), (a) => a.status === 200, 60_000);
    t.true(back.bytes.equals(expected));
  }
  await until('both nodes consume again', () => vhost.queue(), (q) => q.consumerCount === 2, 60_000);
});

test.serial('an API instance killed with jobs waiting: they expire on the node, unrendered', async (t) => {
  const timeoutMs = 2000;
  const doomed = await startSkins({ RENDER_QUEUE_URL: vhost.url, RENDER_TIMEOUT_MS: String(timeoutMs), UPLOADS_PER_CLIENT: '64' });
  t.teardown(() => doomed.stop());
  await until('the instance sees a consumer', () => doomed.get('/v1/status'), (r) => r.json.data.render.queue.consumers === 2);
  const sum = (reports: Reported[]) => reports.reduce((s, n) => ({ done: s.done + n.jobs.done, expired: s.expired + n.jobs.expired }), { done: 0, expired: 0 });
  // Every job answered so far is counted in reports sent after now.
  const before = sum(await reportedAfter(Date.now()));
  // Paused nodes take the jobs into their prefetch window (the broker sends them) but draw none.
  for (const node of nodes) node.process.kill('SIGSTOP');
  t.teardown(() => { for (const node of nodes) node.process.kill('SIGCONT'); });
  const sent = Date.now();
  const load = Array.from({ length: 6 }, () => upload(doomed).catch(() => null));
  await until('the jobs left the instance', () => doomed.get('/v1/status'), (r) => r.json.data.render.pending === 6);
  doomed.app.process.kill('SIGKILL');
  await Promise.all(load);
  // Past every job's deadline (a fact of the clock, not a guess at the machine's speed).
  await until('the deadline passed', async () => Date.now(), (now) => now > sent + timeoutMs + 200);
  for (const node of nodes) node.process.kill('SIGCONT');
  const after = await until('the nodes report the jobs dropped', async () => sum(await reported()), (s) => s.expired > before.expired, 30_000);
  t.log({ before, after });
  t.is(after.done, before.done, 'none of them was drawn');
  t.true(nodes.some((n) => n.logs.some((e) => e.msg === 'render jobs past their deadline dropped unrendered')), 'logged by a node');
});

test.serial('a broker unreachable when the instance starts: it starts, renders answer 503 at once and /ready is degraded; once the broker answers, it connects by itself', async (t) => {
  const proxy = await tcpProxy(new URL(AMQP_URL));
  t.teardown(() => proxy.close());
  await proxy.cut();
  const late = await startSkins({ RENDER_QUEUE_URL: proxy.url(vhost.url), UPLOADS_PER_CLIENT: '64' });
  t.teardown(() => late.stop());
  const refused = await upload(late);
  t.is(refused.status, 503);
  t.is(refused.json.code, 'render_unavailable');
  t.truthy(refused.headers.get('retry-after'));
  const ready = await late.get('/ready');
  t.is(ready.status, 200);
  t.like(ready.json, { status: 'degraded' });
  t.regex(ready.json.checks.find((c: { name: string }) => c.name === 'render_farm').detail, /broker cannot be reached/);
  await proxy.restore();
  await late.app.waitForLog((e) => e.msg === 'connected to the render queue broker', 60_000);
  const drawn = await until('a render once the broker answers', () => upload(late), (a) => a.status === 200, 60_000);
  t.true(drawn.bytes.equals(expected));
});
