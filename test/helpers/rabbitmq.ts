// RabbitMQ for the render queue tests: a vhost of its own per test file on the machine's broker
// (127.0.0.1:5672 as guest, or TEST_AMQP_URL; .ci/run starts one), made and dropped with
// rabbitmqctl, the queue as the broker counts it, the vhost's connections cut, and render nodes
// started as an operator starts them (`node scripts/render-node.ts`).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { connect } from 'amqplib';
import { RENDER_QUEUE } from '../../renderer/queue/wire.ts';
import { launch, type RunningService } from '../../scripts/launch.ts';

export const AMQP_URL = process.env.TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

const rabbitmqctl = async (...args: string[]) => (await promisify(execFile)('rabbitmqctl', ['--quiet', ...args])).stdout;

export interface TestVhost {
  name: string;
  /** AMQP_URL on this vhost. */
  url: string;
  /** The render queue as the broker counts it now. */
  queue(): Promise<{ messageCount: number; consumerCount: number }>;
  /** Closes every client connection of the vhost, as a broker restart does to its clients. */
  cutConnections(): Promise<void>;
  drop(): Promise<void>;
}

export async function createVhost(): Promise<TestVhost> {
  const name = `skinfarm-test-${randomBytes(6).toString('hex')}`;
  const user = decodeURIComponent(new URL(AMQP_URL).username || 'guest');
  await rabbitmqctl('add_vhost', name);
  await rabbitmqctl('set_permissions', '-p', name, user, '.*', '.*', '.*');
  const url = `${AMQP_URL.replace(/\/+$/, '')}/${encodeURIComponent(name)}`;
  return {
    name,
    url,
    async queue() {
      const connection = await connect(url);
      try {
        const channel = await connection.createChannel();
        return await channel.assertQueue(RENDER_QUEUE, { durable: true });
      } finally {
        await connection.close();
      }
    },
    cutConnections: () => rabbitmqctl('close_all_connections', '--vhost', name, 'cut by a test').then(() => {}),
    drop: () => rabbitmqctl('delete_vhost', name).then(() => {}),
  };
}

/**
 * `node scripts/render-node.ts` on `url`, ready once it takes jobs. Software rendering unless
 * `env` says otherwise; its other settings are the defaults unless `env` sets them.
 */
export function startRenderNode(url: string, env: Record<string, string> = {}): Promise<RunningService> {
  return launch({ RENDER_QUEUE_URL: url, RENDER_GPU: 'off', LOG_LEVEL: 'debug', ...env }, { entry: 'scripts/render-node.ts', keepIndexing: true, timeoutMs: 120_000 });
}
