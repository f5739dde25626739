// The render farm in the process against the same pages behind RabbitMQ (issue #45), at function
// level (no HTTP): cold renders (a unique yaw and pitch per job, 16 generated skins in turn) at a
// fixed number of jobs in flight, through `RenderFarm` and through `RemoteFarm` with render nodes
// started as an operator starts them (`node scripts/render-node.ts`), runs alternating, medians
// reported. Then what a publisher confirm would cost a job: 16 KiB messages published plainly
// against each awaited on a confirm channel. Needs a broker: --url (a vhost of its own is best;
// the bench purges `skinfarm.render` there first).
// `npm run bench:render-queue -- [--url amqp://guest:guest@127.0.0.1:5672] [--jobs 400] [--workers 2] [--nodes 1]
//   [--size 128] [--inflight 32] [--runs 3] [--gpu auto|on|off]`
import os from 'node:os';
import { parseArgs } from 'node:util';
import { connect } from 'amqplib';
import { RenderFarm, type Farm } from '../../renderer/farm.ts';
import { GPU_MODES, type GpuMode } from '../../renderer/gpu.ts';
import { RemoteFarm } from '../../renderer/queue/remote-farm.ts';
import { RENDER_QUEUE } from '../../renderer/queue/wire.ts';
import { normalizeSkin } from '../../renderer/skin-normalize.ts';
import { silentLogger } from '../../shared/log.ts';
import { drawSkin } from '../fake-upstream/skin-art.ts';
import { launch, type RunningService } from '../launch.ts';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: 'amqp://guest:guest@127.0.0.1:5672' },
    jobs: { type: 'string', default: '400' },
    workers: { type: 'string', default: String(os.availableParallelism()) },
    nodes: { type: 'string', default: '1' },
    size: { type: 'string', default: '128' },
    inflight: { type: 'string', default: '32' },
    runs: { type: 'string', default: '3' },
    gpu: { type: 'string', default: 'auto' },
  },
});
const [jobs, workers, nodeCount, size, inflight, runs] = ['jobs', 'workers', 'nodes', 'size', 'inflight', 'runs'].map((k) => Number(values[k as keyof typeof values]));
if (!GPU_MODES.includes(values.gpu as GpuMode)) throw new Error(`--gpu takes auto, on or off: ${values.gpu}`);
if (workers % nodeCount !== 0) throw new Error('--workers must be a multiple of --nodes: each node gets workers / nodes pages');
const gpu = values.gpu as GpuMode;
const url = values.url!;

const skins = await Promise.all(Array.from({ length: 16 }, async (_, seed) => normalizeSkin(await drawSkin({ seed: 4500 + seed }))));
let round = 0;

/** Renders/s and latency percentiles (ms) of `jobs` cold renders, `inflight` at a time. */
async function measure(farm: Farm): Promise<{ perSecond: number; p50: number; p99: number }> {
  round += 1;
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: inflight }, async () => {
    while (next < jobs) {
      const i = next++;
      const t = performance.now();
      await farm.render({ kind: 'render', skin: skins[i % skins.length], slim: false, size, yaw: (i * 7 + round) % 360, pitch: (i + round) % 40, shadow: true, outer: true, bg: null });
      latencies.push(performance.now() - t);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] * 10) / 10;
  return { perSecond: Math.round(jobs / seconds), p50: at(0.5), p99: at(0.99) };
}

/** Messages a second: `count` 16 KiB messages published plainly (then one round trip), or each awaited on a confirm channel, `inflight` at a time. */
async function publishRate(confirmed: boolean, count: number): Promise<number> {
  const connection = await connect(url);
  try {
    const queue = `skinfarm.bench.${process.pid}`;
    const body = Buffer.alloc(16 * 1024, 7);
    const started = performance.now();
    if (confirmed) {
      const channel = await connection.createConfirmChannel();
      await channel.assertQueue(queue, { autoDelete: true, expires: 60_000 });
      let next = 0;
      await Promise.all(Array.from({ length: inflight }, async () => {
        while (next++ < count) await new Promise<void>((resolve, reject) => channel.sendToQueue(queue, body, {}, (error) => (error ? reject(error) : resolve())));
      }));
      await channel.deleteQueue(queue);
    } else {
      const channel = await connection.createChannel();
      await channel.assertQueue(queue, { autoDelete: true, expires: 60_000 });
      for (let i = 0; i < count; i += 1) channel.sendToQueue(queue, body);
      // Answered after every message before it was taken in.
      await channel.checkQueue(queue);
      await channel.deleteQueue(queue);
    }
    return Math.round(count / ((performance.now() - started) / 1000));
  } finally {
    await connection.close();
  }
}

const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];

const purge = await connect(url);
const channel = await purge.createChannel();
await channel.assertQueue(RENDER_QUEUE, { durable: true });
await channel.purgeQueue(RENDER_QUEUE);
await purge.close();

const local = await RenderFarm.create({ workers, gpu, queueLimit: 100_000, jobTimeoutMs: 120_000 }, silentLogger);
const nodeEnv = { RENDER_QUEUE_URL: url, RENDER_WORKERS: String(workers / nodeCount), RENDER_GPU: gpu, RENDER_TIMEOUT_MS: '120000' };
let nodes: RunningService[] = [];
const remote = await RemoteFarm.create({ url, jobTimeoutMs: 120_000, queueLimit: 100_000 }, silentLogger);
const results: Record<'process' | 'queue', Array<{ perSecond: number; p50: number; p99: number }>> = { process: [], queue: [] };
try {
  for (let run = 0; run < runs; run += 1) {
    results.process.push(await measure(local));
    // The nodes run only while measured, so the farm in the process has the cores to itself.
    nodes = await Promise.all(Array.from({ length: nodeCount }, () => launch(nodeEnv, { entry: 'scripts/render-node.ts', keepIndexing: true, timeoutMs: 120_000 })));
    while (remote.remote().queue.consumers < nodeCount) await new Promise((resolve) => setTimeout(resolve, 200));
    await measure(remote);
    results.queue.push(await measure(remote));
    await Promise.all(nodes.map((n) => n.stop()));
    nodes = [];
    console.log(`run ${run + 1}: process ${results.process.at(-1)!.perSecond}/s, queue ${results.queue.at(-1)!.perSecond}/s`);
  }
  const plain = await publishRate(false, 4000);
  const confirmed = await publishRate(true, 4000);
  const info = local.info();
  console.log(`\nNode ${process.version}, ${info.browserVersion}, WebGL: ${info.webglRenderer}; ${os.availableParallelism()} cores, ${workers} pages (${nodeCount} node(s) of ${workers / nodeCount}), ${size} px renders, ${inflight} in flight, ${jobs} jobs a run, medians of ${runs} alternating runs (the queue's after a warm-up run each)\n`);
  console.log('| farm | renders/s | p50 ms | p99 ms |\n|---|---|---|---|');
  for (const [name, list] of Object.entries(results)) console.log(`| ${name === 'process' ? 'in the process' : 'render nodes over RabbitMQ'} | ${median(list.map((r) => r.perSecond))} | ${median(list.map((r) => r.p50))} | ${median(list.map((r) => r.p99))} |`);
  console.log(`\n16 KiB messages published: ${plain}/s plain, ${confirmed}/s each confirmed (${inflight} in flight)`);
} finally {
  await Promise.all(nodes.map((n) => n.stop()));
  await remote.close();
  await local.close();
}
