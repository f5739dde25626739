// `npm run render-node`: a render node. Today's farm (Chromium pages, RENDER_WORKERS, RENDER_GPU,
// RENDER_BATCH_SIZE, ... read as the service reads them) taking its jobs from RENDER_QUEUE_URL
// instead of HTTP requests (renderer/queue/render-node.ts). Any number of nodes, with a GPU or
// without, may serve one queue. Logs 'ready' once it takes jobs; SIGTERM stops taking jobs,
// answers the ones it holds, then closes the browsers. Given back memory when idle, as the
// service does (IDLE_TRIM_SECONDS).
import { IdleTrim } from '../api/idle-trim.ts';
import { bootLogFormat, ConfigError, loadConfig } from '../api/config.ts';
import { RenderFarm } from '../renderer/farm.ts';
import { shownBrokerUrl } from '../renderer/queue/connection.ts';
import { RenderNode } from '../renderer/queue/render-node.ts';
import { createLogger } from '../shared/log.ts';

const bootLog = createLogger('info', {}, undefined, bootLogFormat());
let config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  bootLog.error(error.message, { problems: error.problems });
  process.exit(78);
}
const { queueUrl, ...render } = config.render;
if (!queueUrl || render.workers === 0) {
  bootLog.error(!queueUrl ? 'RENDER_QUEUE_URL is not set: a render node takes its jobs from that queue' : 'RENDER_WORKERS is 0: a render node needs pages');
  process.exit(78);
}
const log = createLogger(config.logLevel, { service: 'render-node' }, undefined, config.logFormat);

const stop = new AbortController();
let running: { node: RenderNode; farm: RenderFarm; idle: IdleTrim | null } | null = null;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, async () => {
    if (stop.signal.aborted) return;
    stop.abort(new Error(`stopped by ${signal}`));
    log.info('shutting down', { signal });
    setTimeout(() => {
      log.error('stop took too long; exiting');
      process.exit(1);
    }, 30_000).unref();
    if (!running) return;
    running.idle?.close();
    await running.node.close();
    await running.farm.close();
    process.exit(0);
  });
}

try {
  const farm = await RenderFarm.create(render, log.child({ component: 'renderer' }), stop.signal);
  let idle: IdleTrim | null = null;
  if (config.idleTrimSeconds > 0) idle = new IdleTrim({ idleMs: config.idleTrimSeconds * 1000, log, trim: () => farm.trim() });
  const node = new RenderNode({ url: queueUrl, farm, batchSize: render.batchSize, log: log.child({ component: 'render-queue' }), onJob: () => idle?.touch() });
  running = { node, farm, idle };
  await node.firstTry;
  idle?.started();
  // Ready whether or not the broker answers yet: the node connects by itself when it does.
  log.info('ready', { node: node.id, broker: shownBrokerUrl(queueUrl), connected: node.connected, pages: render.workers, prefetch: node.prefetch, gpu: farm.info().gpu });
} catch (error) {
  if (stop.signal.aborted) process.exit(0);
  log.error('start-up failed', { err: error });
  process.exit(1);
}
