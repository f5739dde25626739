// The render farm over a real RabbitMQ (issue #45): a skins instance with RENDER_QUEUE_URL and no
// browser, a render node as an operator starts it with its defaults (`node scripts/render-node.ts`,
// its idle trim included), both on a vhost of this file's own. Every kind of image equals, byte for
// byte, what an instance with its farm in the process draws; /v1/status and /metrics list the node
// and the queue; renders keep coming after the node's idle trim; and with no node left, renders
// answer 503 `render_unavailable` at once while /ready says degraded and cached images are served.
// Real broker, node, Chromium, service and fake upstream; the tests share them, in order.
import test from 'ava';
import { connect } from 'amqplib';
import { createVhost, startRenderNode, type TestVhost } from './helpers/rabbitmq.ts';
import { RENDER_QUEUE } from '../renderer/queue/wire.ts';
import { until } from './helpers/poll.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';
import type { RunningService } from '../scripts/launch.ts';

let vhost: TestVhost;
let node: RunningService;
/** The instance whose renders go through the queue, and one with its farm in the process. */
let queued: SkinsHarness;
let local: SkinsHarness;

test.before(async () => {
  vhost = await createVhost();
  [node, queued, local] = await Promise.all([
    startRenderNode(vhost.url),
    startSkins({ RENDER_QUEUE_URL: vhost.url }),
    startSkins({ RENDER_WORKERS: '1', RENDER_GPU: 'off' }),
  ]);
});
test.after.always(async () => {
  await Promise.all([queued?.stop(), local?.stop(), node?.stop()]);
  await vhost?.drop();
});

/** Every kind the farm draws, at angles `round` makes new (no cache hit), and a turntable. */
const paths = (round: number) => [
  `/v1/render/Knight/96?yaw=${10 + round}`, `/v1/body/Ranger/96?yaw=${20 + round}`, `/v1/cube/Robot/64?yaw=${30 + round}`,
  `/v1/head/Knight/64?yaw=${40 + round}`, `/v1/bust/Ranger/80?yaw=${50 + round}`, `/v1/turntable/Knight/48?frames=8&pitch=${round}`,
  `/v1/render/Ranger/64.webp?yaw=${60 + round}`,
];

async function sameAsInProcess(t: import('ava').ExecutionContext, round: number): Promise<void> {
  for (const path of paths(round)) {
    const [remote, here] = await Promise.all([queued.get(path), local.get(path)]);
    t.is(remote.status, 200, `${path}: ${remote.text.slice(0, 200)}`);
    t.is(here.status, 200, `${path} in process: ${here.text.slice(0, 200)}`);
    t.true(remote.bytes.equals(here.bytes), `${path}: the same bytes as the farm in the process draws`);
  }
}

test.serial('every kind of image through a render node equals, byte for byte, the in-process farm\'s', async (t) => {
  await sameAsInProcess(t, 0);
  const upload = async (h: SkinsHarness) => {
    const skin = (await local.get('/v1/skin/Robot')).bytes;
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(skin)], { type: 'image/png' }), 'skin.png');
    form.set('yaw', '33');
    return h.get('/v1/render/72', { method: 'POST', body: form });
  };
  const [remote, here] = await Promise.all([upload(queued), upload(local)]);
  t.is(remote.status, 200, remote.text.slice(0, 200));
  t.true(remote.bytes.equals(here.bytes), 'an uploaded skin');
});

test.serial('/v1/status and /metrics list the node and the queue; /ready is ok', async (t) => {
  // Nodes report every 2 s, and the queue is asked as often: the jobs above are in a report soon.
  const status = await until('the node and its jobs in /v1/status', () => queued.get('/v1/status'),
    (r) => r.json?.data?.render?.nodes?.[0]?.jobs?.done >= 8 && r.json.data.render.queue.consumers === 1);
  const render = status.json.data.render;
  t.like(render, { state: 'ok', broker_connected: true, queue: { name: 'skinfarm.render', consumers: 1 }, pending: 0 });
  const [reported] = render.nodes;
  t.true(reported.stats.workers >= 1, 'its pages');
  t.false(reported.info.gpu);
  t.like(reported.jobs, { failed: 0, expired: 0, requeued: 0 });
  t.is(render.workers, reported.stats.workers, 'the pages this instance can draw on are the nodes\'');
  const metrics = (await queued.get('/metrics')).text;
  t.regex(metrics, /^skinfarm_render_nodes 1$/m);
  t.regex(metrics, /^skinfarm_render_queue_depth 0$/m);
  t.regex(metrics, /^skinfarm_render_queue_consumers 1$/m);
  t.regex(metrics, /^skinfarm_render_broker_up 1$/m);
  t.regex(metrics, /^skinfarm_render_queue_wait_seconds /m);
  const ready = await queued.get('/ready');
  t.is(ready.status, 200);
  t.like(ready.json.checks.find((c: { name: string }) => c.name === 'render_farm'), { status: 'ok' });
});

test.serial('messages on the queue that are no render job are dropped by the node, which goes on drawing', async (t) => {
  const header = (json: string) => Buffer.concat([Buffer.from([0, 0, 0, Buffer.byteLength(json)]), Buffer.from(json)]);
  const hostile = [
    Buffer.from('not a job at all'),
    Buffer.alloc(0),
    Buffer.from([0xff, 0xff, 0xff, 0xff, 0x7b]),
    header('{"id":"x"}'),
    header('{"id":"y","sentAt":0,"deadline":9e15,"job":{"kind":"render"},"skin":{"bytes":1048576,"width":64,"key":"k"}}'),
  ];
  const since = Date.now();
  const connection = await connect(vhost.url);
  try {
    const channel = await connection.createChannel();
    for (const body of hostile) channel.sendToQueue(RENDER_QUEUE, body, { correlationId: 'hostile', replyTo: 'amq.rabbitmq.reply-to.nobody' });
    await channel.close();
  } finally {
    await connection.close();
  }
  const dropped = async () => node.logs.filter((e) => e.msg === 'a render job could not be read; dropped' && Date.parse(String(e.time)) >= since).length;
  await until('the node dropped them', dropped, (n) => n >= hostile.length, 60_000);
  t.is(await dropped(), hostile.length);
  await until('the queue empty', () => vhost.queue(), (q) => q.messageCount === 0);
  await sameAsInProcess(t, 2);
});

test.serial('after the node\'s idle trim (its defaults) every kind of image still comes, the same', async (t) => {
  const since = Date.now();
  await node.waitForLog((e) => e.msg === 'idle: memory trimmed' && Date.parse(String(e.time)) > since, 120_000);
  await sameAsInProcess(t, 1);
});

test.serial('no node: renders answer 503 render_unavailable with Retry-After at once, /ready is degraded, cached images are served', async (t) => {
  const cached = paths(0)[0];
  t.is((await queued.get(cached)).status, 200);
  await node.stop();
  const ready = await until('/ready degraded', () => queued.get('/ready'), (r) => r.json?.status === 'degraded', 60_000);
  t.is(ready.status, 200, 'still ready: cached images work and no other instance would do better');
  t.like(ready.json.checks.find((c: { name: string }) => c.name === 'render_farm'), { status: 'degraded' });
  // A job waiting for its timeout would answer 500 render_failed (timeout), not this.
  const refused = await queued.get('/v1/render/Knight/96?yaw=123');
  t.is(refused.status, 503);
  t.is(refused.json.code, 'render_unavailable');
  t.truthy(refused.headers.get('retry-after'));
  t.like(await vhost.queue(), { messageCount: 0 }, 'nothing was queued');
  const hit = await queued.get(cached);
  t.is(hit.status, 200, 'a cached image');
  t.regex((await queued.get('/metrics')).text, /^skinfarm_render_nodes 0$/m);
});
