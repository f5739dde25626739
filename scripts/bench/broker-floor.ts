// What RabbitMQ and amqplib cost on their own on this machine, in the same run as the render
// queue's figures: bare messages of a job's and an answer's size, sent the way RemoteFarm sends
// them (direct reply-to, an expiration, noDelay) and answered the way a render node answers (ack
// after the reply), with no rendering, no HTTP and none of our framing. The queue's added latency
// and CPU are judged against this floor: what the broker itself takes, whatever our code does.
import { connect } from 'amqplib';
import { cpuOfTrees, cpuSecondsBetween } from './process-memory.ts';

export interface BrokerFloor {
  /** Closed loop, `concurrency` round trips at a time: CPU ms a round trip of both ends (this process) and of the broker. */
  cpuMs: { clients: number; broker: number };
  /** Round trips paced at `rate` a second: p50 and p99 ms. */
  paced: { p50: number; p99: number };
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];
const round = (n: number) => Math.round(n * 100) / 100;

export async function measureBrokerFloor(url: string, o: { jobBytes: number; answerBytes: number; roundTrips: number; concurrency: number; rate: number; paced: number; brokerPids: number[] }): Promise<BrokerFloor> {
  const publisher = await connect(url, { noDelay: true });
  const consumer = await connect(url, { noDelay: true });
  // A failure comes out as a rejected call below; an 'error' event with no listener would end the
  // bench's process and leave the services it started running.
  for (const connection of [publisher, consumer]) connection.on('error', () => {});
  try {
    const out = await publisher.createChannel();
    const into = await consumer.createChannel();
    for (const channel of [out, into]) channel.on('error', () => {});
    // Exclusive to the consuming connection: it goes with it.
    const { queue } = await into.assertQueue('', { exclusive: true });
    await into.prefetch(o.concurrency);
    const answer = Buffer.alloc(o.answerBytes, 1);
    await into.consume(queue, (message) => {
      if (!message) return;
      into.sendToQueue(message.properties.replyTo as string, answer, { correlationId: message.properties.correlationId });
      into.ack(message);
    });
    const waiting = new Map<string, () => void>();
    await out.consume('amq.rabbitmq.reply-to', (message) => message && waiting.get(String(message.properties.correlationId))?.(), { noAck: true });
    const job = Buffer.alloc(o.jobBytes, 2);
    let sent = 0;
    const roundTrip = () => new Promise<number>((resolve) => {
      const id = String(sent++);
      const started = performance.now();
      waiting.set(id, () => {
        waiting.delete(id);
        resolve(performance.now() - started);
      });
      out.sendToQueue(queue, job, { replyTo: 'amq.rabbitmq.reply-to', correlationId: id, expiration: '30000' });
    });

    const ownBefore = process.cpuUsage();
    const brokerBefore = cpuOfTrees(o.brokerPids);
    let left = o.roundTrips;
    await Promise.all(Array.from({ length: o.concurrency }, async () => {
      while (left-- > 0) await roundTrip();
    }));
    const own = process.cpuUsage(ownBefore);
    const cpuMs = {
      clients: round((own.user + own.system) / 1000 / o.roundTrips),
      broker: round((cpuSecondsBetween(brokerBefore, cpuOfTrees(o.brokerPids)) * 1000) / o.roundTrips),
    };

    const times: number[] = [];
    for (let i = 0; i < o.paced; i += 1) {
      const next = performance.now() + 1000 / o.rate;
      times.push(await roundTrip());
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
    }
    return { cpuMs, paced: { p50: round(quantile(times, 0.5)), p99: round(quantile(times, 0.99)) } };
  } finally {
    await publisher.close().catch(() => {});
    await consumer.close().catch(() => {});
  }
}
