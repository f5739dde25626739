// A farm whose pages are elsewhere: render nodes (renderer/queue/render-node.ts) consuming one
// durable queue on a RabbitMQ broker. Each job is published with its deadline as the message's
// expiration (the broker drops it unrendered past it) and answered on direct reply-to, so the
// answer comes back to this instance and to no queue that could outlive it. An answer nobody
// waits for any more (a duplicate after a redelivery, one past its timeout) is counted and dropped.
//
// Without a node (none reported itself for three intervals and none consumes the queue) or without
// the broker, a job is refused at once (`unreachable`: 503 with Retry-After) instead of waiting for
// its timeout, and so are the jobs that were waiting on a connection that was lost. The farm is
// then `degraded`, never `down`: cached images are still served here, and every instance shares
// the nodes, so taking this one out of a balancer would help no one.
import { randomUUID } from 'node:crypto';
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import type { Logger } from '../../shared/log.ts';
import { RenderError } from '../errors.ts';
import type { Farm, FarmHealth, FarmInfo, FarmStats } from '../farm.ts';
import type { RenderJob } from '../jobs.ts';
import { BrokerLink, renderChannel, shownBrokerUrl } from './connection.ts';
import { NodeRoster, type NodeReport, type RemoteState } from './reports.ts';
import { decodeAnswer, encodeJob, RENDER_QUEUE, REPORT_EVERY_MS, STATUS_EXCHANGE } from './wire.ts';

export interface RemoteFarmConfig {
  /** amqp:// or amqps:// URL of the broker (RENDER_QUEUE_URL). */
  url: string;
  /** A job's deadline from when it is sent: the answer must be here by then. */
  jobTimeoutMs: number;
  /** Jobs this instance may wait for at once; past it `queue_full` at once. */
  queueLimit: number;
}

/** Where RabbitMQ's direct reply-to answers arrive (consumed without acknowledgements, on the publishing channel). */
const REPLY_TO = 'amq.rabbitmq.reply-to';

const RETRY_AFTER_S = 5;
const unreachable = (en: string, zh: string) => new RenderError('unreachable', en, { zh, retryAfterSeconds: RETRY_AFTER_S });

interface Pending { resolve: (answer: Buffer | Buffer[]) => void; reject: (error: Error) => void; timer: NodeJS.Timeout; sentAt: number }

export class RemoteFarm implements Farm {
  private readonly config: RemoteFarmConfig;
  private readonly log: Logger;
  private readonly link: BrokerLink;
  private channel: Channel | null = null;
  private readonly pending = new Map<string, Pending>();
  private readonly roster = new NodeRoster();
  private queue: { depth: number; consumers: number; at: number } | null = null;
  private readonly checking: NodeJS.Timeout;
  private closed = false;
  private readonly counters = { completed: 0, failed: 0, ignoredAnswers: 0 };
  private failedInARow = 0;
  private lastDrawnAt: number | null = null;
  private lastError: string | null = null;

  private constructor(config: RemoteFarmConfig, log: Logger) {
    this.config = config;
    this.log = log;
    this.link = new BrokerLink({
      url: config.url, name: 'skinfarm api', log,
      open: (connection) => this.open(connection),
      lost: () => this.lose('the connection to the render queue broker was lost', '与渲染队列的连接已断开'),
    });
    // The queue's depth and consumers, for the availability rule, /v1/status and /metrics.
    this.checking = setInterval(() => void this.checkQueue(), REPORT_EVERY_MS);
    this.checking.unref();
  }

  /**
   * Connects (one try: a broker that is down at start is tried again in the background, and renders
   * answer 503 meanwhile) and learns whether a node consumes the queue.
   */
  static async create(config: RemoteFarmConfig, log: Logger): Promise<RemoteFarm> {
    const farm = new RemoteFarm(config, log);
    await farm.link.firstTry;
    return farm;
  }

  private async open(connection: ChannelModel): Promise<void> {
    const channel = await renderChannel(connection, (c) => this.channel === c);
    const reports = await channel.assertQueue('', { exclusive: true, autoDelete: true });
    await channel.bindQueue(reports.queue, STATUS_EXCHANGE, '');
    await channel.consume(reports.queue, (message) => message && this.noteReport(message), { noAck: true });
    await channel.consume(REPLY_TO, (message) => message && this.answer(message), { noAck: true });
    this.channel = channel;
    await this.checkQueue();
  }

  private noteReport(message: ConsumeMessage): void {
    try {
      const report = JSON.parse(message.content.toString('utf8')) as NodeReport;
      this.roster.note(report);
      // A node that stopped taking jobs may have been the last consumer: ask now, not in 2 s.
      if (!report.consuming) void this.checkQueue();
    } catch {
      this.log.warn('a render node report could not be read');
    }
  }

  private async checkQueue(): Promise<void> {
    const channel = this.channel;
    if (!channel) return;
    try {
      const { messageCount, consumerCount } = await channel.checkQueue(RENDER_QUEUE);
      this.queue = { depth: messageCount, consumers: consumerCount, at: Date.now() };
    } catch {
      // The channel closed meanwhile: the link makes a new one.
    }
  }

  /** Fails every job waiting on a connection that is gone: their answers cannot come back on a new one. */
  private lose(en: string, zh: string): void {
    this.channel = null;
    this.queue = null;
    for (const id of [...this.pending.keys()]) this.settle(id, unreachable(en, zh));
  }

  /**
   * Whether a job sent now could be taken: a node reported lately that it takes jobs, or the queue
   * had a consumer at its last check (a node that just started, whose first report is on its way).
   */
  private nodesAvailable(): boolean {
    return this.roster.anyConsuming() || (this.queue?.consumers ?? 0) > 0;
  }

  render(job: RenderJob): Promise<Buffer> {
    return this.send(job) as Promise<Buffer>;
  }

  renderFrames(job: RenderJob, yaws: number[]): Promise<Buffer[]> {
    if (job.kind !== 'render' || yaws.length === 0) return Promise.reject(new RenderError('failed', 'frames are drawn for renders, at least one'));
    return this.send({ ...job, yaws }) as Promise<Buffer[]>;
  }

  private send(job: RenderJob): Promise<Buffer | Buffer[]> {
    if (this.closed) return Promise.reject(new RenderError('closed', 'the render farm is closed', { zh: '渲染池已关闭', retryAfterSeconds: RETRY_AFTER_S }));
    const channel = this.channel;
    if (!channel) return Promise.reject(unreachable('the render queue broker cannot be reached', '无法连接渲染队列'));
    if (!this.nodesAvailable()) return Promise.reject(unreachable('no render node takes jobs from the queue', '没有渲染节点在处理队列'));
    if (this.pending.size >= this.config.queueLimit) return Promise.reject(new RenderError('queue_full', 'the render queue is full', { zh: '渲染队列已满', retryAfterSeconds: 1 }));
    const id = randomUUID();
    const sentAt = Date.now();
    const { jobTimeoutMs } = this.config;
    return new Promise<Buffer | Buffer[]>((resolve, reject) => {
      const timer = setTimeout(() => this.settle(id, new RenderError('timeout', 'timeout', { zh: '超时' })), jobTimeoutMs);
      this.pending.set(id, { resolve, reject, timer, sentAt });
      // Not persistent, no publisher confirms: a job lost with the broker is failed at once by the
      // lost connection (above) and asked again by its client; persisting and confirming would
      // cost each render a disk write and a round trip for jobs that expire in seconds anyway.
      try {
        channel.sendToQueue(RENDER_QUEUE, encodeJob({ id, sentAt, deadline: sentAt + jobTimeoutMs, job }), {
          replyTo: REPLY_TO, correlationId: id, expiration: String(jobTimeoutMs), contentType: 'application/x-skinfarm-job',
        });
      } catch {
        // The channel closed since it was looked up (its close event has not come yet).
        this.settle(id, unreachable('the render queue broker cannot be reached', '无法连接渲染队列'));
      }
    });
  }

  private answer(message: ConsumeMessage): void {
    const id = String(message.properties.correlationId);
    if (!this.pending.has(id)) {
      this.counters.ignoredAnswers += 1;
      return;
    }
    try {
      const answer = decodeAnswer(message.content);
      if ('error' in answer) this.settle(id, new RenderError(answer.error.kind, answer.error.message, { zh: answer.error.zh }));
      else this.settle(id, answer.frames ? answer.images : answer.images[0]);
    } catch (error) {
      this.settle(id, new RenderError('failed', `the render node's answer could not be read: ${(error as Error).message}`));
    }
  }

  private settle(id: string, result: Buffer | Buffer[] | Error): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    clearTimeout(pending.timer);
    if (result instanceof Error) {
      this.counters.failed += 1;
      this.failedInARow += 1;
      this.lastError = result.message.slice(0, 200);
      pending.reject(result);
    } else {
      this.counters.completed += 1;
      this.failedInARow = 0;
      this.lastDrawnAt = Date.now();
      pending.resolve(result);
    }
  }

  stats(): FarmStats {
    const nodes = this.roster.live();
    const sum = (read: (stats: FarmStats) => number) => nodes.reduce((n, node) => n + read(node.stats), 0);
    return {
      workers: sum((s) => s.workers), pagesAlive: sum((s) => s.pagesAlive), queued: this.queue?.depth ?? 0, running: this.pending.size,
      completed: this.counters.completed, failed: this.counters.failed,
      browserRestarts: sum((s) => s.browserRestarts), pagesOpened: sum((s) => s.pagesOpened), contextLosses: sum((s) => s.contextLosses),
      selfCheckFailures: sum((s) => s.selfCheckFailures), watchdogRestarts: sum((s) => s.watchdogRestarts),
    };
  }

  info(): FarmInfo {
    const nodes = this.roster.live();
    return {
      browserVersion: nodes[0]?.info.browserVersion ?? '', webglRenderer: nodes[0]?.info.webglRenderer ?? '',
      gpu: nodes.some((n) => n.info.gpu), executable: `render nodes on ${shownBrokerUrl(this.config.url)}`, browsers: nodes.reduce((n, node) => n + node.info.browsers, 0),
    };
  }

  health(): FarmHealth {
    const facts = { lastDrawnAt: this.lastDrawnAt === null ? null : new Date(this.lastDrawnAt).toISOString(), failedInARow: this.failedInARow, lastError: this.lastError };
    if (!this.channel) return { state: 'degraded', detail: `the render queue broker cannot be reached (${shownBrokerUrl(this.config.url)}): renders answer 503, cached images are served`, ...facts };
    if (!this.nodesAvailable()) return { state: 'degraded', detail: `no render node takes jobs from ${RENDER_QUEUE}: renders answer 503, cached images are served`, ...facts };
    const nodes = this.roster.live();
    const down = nodes.filter((n) => n.state === 'down').length;
    const pages = nodes.reduce((n, node) => n + node.stats.pagesAlive, 0);
    return { state: down > 0 && down === nodes.length ? 'degraded' : 'ok', detail: `${nodes.length} render node${nodes.length === 1 ? '' : 's'} (${pages} pages${down ? `, ${down} cannot draw` : ''})`, ...facts };
  }

  remote(): RemoteState {
    let oldest = 0;
    for (const { sentAt } of this.pending.values()) oldest = Math.max(oldest, Date.now() - sentAt);
    return {
      connected: this.channel !== null,
      queue: { name: RENDER_QUEUE, depth: this.queue?.depth ?? 0, consumers: this.queue?.consumers ?? 0, checkedAt: this.queue ? new Date(this.queue.at).toISOString() : null },
      pending: this.pending.size, oldestPendingMs: oldest, ignoredAnswers: this.counters.ignoredAnswers, nodes: this.roster.live(),
    };
  }

  /** The nodes give back their own memory when idle; this instance holds nothing to trim. */
  async trim(): Promise<void> {}

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.checking);
    for (const id of [...this.pending.keys()]) this.settle(id, new RenderError('closed', 'the render farm is closed', { zh: '渲染池已关闭', retryAfterSeconds: RETRY_AFTER_S }));
    await this.link.close();
  }
}
