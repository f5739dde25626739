// A render node: a RenderFarm that takes its jobs from the broker's queue (scripts/render-node.ts
// runs one). It takes as many at once as its pages draw together (pages x batch size), checks each
// job's deadline before drawing (one past it is dropped unrendered and counted), publishes the
// answer to the job's reply address and only then acknowledges the job: a node that dies or hangs
// mid-batch leaves its jobs unacknowledged, and the broker hands them to another node. A job that
// fails here goes back to the queue once (another node, or a fresh page, may draw it); failing
// again, it is answered with its error. A node whose farm cannot draw stops taking jobs until it
// draws again. Every REPORT_EVERY_MS it reports itself on STATUS_EXCHANGE.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import type { Logger } from '../../shared/log.ts';
import { StateLog } from '../../shared/log-state.ts';
import { RenderError } from '../errors.ts';
import type { RenderFarm } from '../farm.ts';
import { BrokerLink, renderChannel } from './connection.ts';
import type { NodeReport } from './reports.ts';
import { decodeJob, encodeAnswer, RENDER_QUEUE, REPORT_EVERY_MS, STATUS_EXCHANGE, type Answer } from './wire.ts';

export interface RenderNodeOptions {
  url: string;
  farm: RenderFarm;
  /** The farm's batch size: with its pages, how many jobs the node takes at once. */
  batchSize: number;
  log: Logger;
  /** Called for each job taken (the node's idle trim counts them as requests). */
  onJob?: () => void;
}

export class RenderNode {
  readonly id = `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  readonly prefetch: number;
  private readonly o: RenderNodeOptions;
  private readonly link: BrokerLink;
  private readonly started = new Date().toISOString();
  private channel: Channel | null = null;
  /** The consumer while the node takes jobs (none while its farm cannot draw, or after close). */
  private consumer: string | null = null;
  private readonly jobs = { done: 0, failed: 0, expired: 0, requeued: 0 };
  private inFlight = 0;
  private drained: (() => void) | null = null;
  /** The longest queue wait of the jobs taken since the last report. */
  private longestWaitMs = 0;
  private readonly expired: StateLog;
  private readonly reporting: NodeJS.Timeout;
  private closing = false;
  /** The channel a tick is under way on: two ticks on one channel must not both start a consumer. */
  private ticking: Channel | null = null;

  constructor(o: RenderNodeOptions) {
    this.o = o;
    this.prefetch = o.farm.stats().workers * o.batchSize;
    this.expired = new StateLog(o.log, 'render jobs past their deadline dropped unrendered', { level: 'info' });
    this.link = new BrokerLink({
      url: o.url, name: `skinfarm render node ${this.id}`, log: o.log,
      open: (connection) => this.open(connection),
      // Unacknowledged jobs go back to the queue with the connection; their answers are dropped.
      lost: () => {
        this.channel = null;
        this.consumer = null;
      },
    });
    this.reporting = setInterval(() => this.tick(), REPORT_EVERY_MS);
  }

  get connected(): boolean {
    return this.link.connected;
  }

  /** Settles when the first try to reach the broker is over. */
  get firstTry(): Promise<void> {
    return this.link.firstTry;
  }

  private async open(connection: ChannelModel): Promise<void> {
    const channel = await renderChannel(connection, (c) => this.channel === c);
    await channel.prefetch(this.prefetch);
    this.channel = channel;
    this.consumer = null;
    await this.tick();
  }

  /** Takes jobs while the farm draws, stops while it cannot, and reports. */
  private async tick(): Promise<void> {
    const channel = this.channel;
    if (!channel || this.closing || this.ticking === channel) return;
    this.ticking = channel;
    const drawing = this.o.farm.health().state !== 'down';
    try {
      if (drawing && !this.consumer) {
        const { consumerTag } = await channel.consume(RENDER_QUEUE, (message) => message && void this.take(channel, message));
        // Unless the connection was lost meanwhile (the tag belongs to a channel that is gone).
        if (this.channel === channel) this.consumer = consumerTag;
      } else if (!drawing && this.consumer) {
        this.o.log.warn('the render farm cannot draw: this node takes no jobs until it does');
        const tag = this.consumer;
        this.consumer = null;
        await channel.cancel(tag);
      }
      this.report(channel);
    } catch {
      // The channel closed meanwhile: the link makes a new one.
    } finally {
      if (this.ticking === channel) this.ticking = null;
    }
  }

  private report(channel: Channel): void {
    const { farm } = this.o;
    const report: NodeReport = {
      id: this.id, host: os.hostname(), pid: process.pid, started: this.started, prefetch: this.prefetch,
      info: farm.info(), stats: farm.stats(), state: farm.health().state, consuming: this.consumer !== null, jobs: { ...this.jobs }, queueWaitMs: this.longestWaitMs,
    };
    this.longestWaitMs = 0;
    try {
      channel.publish(STATUS_EXCHANGE, '', Buffer.from(JSON.stringify(report)), { contentType: 'application/json', expiration: String(3 * REPORT_EVERY_MS) });
    } catch {
      // The channel closed meanwhile: the next connection reports.
    }
  }

  private async take(channel: Channel, message: ConsumeMessage): Promise<void> {
    this.o.onJob?.();
    let queued;
    try {
      queued = decodeJob(message.content);
    } catch (error) {
      // Nothing can draw it, here or elsewhere.
      this.o.log.warn('a render job could not be read; dropped', { err: (error as Error).message });
      channel.nack(message, false, false);
      return;
    }
    const { job, deadline, sentAt } = queued;
    this.longestWaitMs = Math.max(this.longestWaitMs, Date.now() - sentAt);
    if (Date.now() >= deadline) {
      this.jobs.expired += 1;
      this.expired.hit({ id: queued.id, late_ms: Date.now() - deadline });
      channel.ack(message);
      return;
    }
    this.inFlight += 1;
    try {
      const answer: Answer = job.yaws ? { images: await this.o.farm.renderFrames(job, job.yaws), frames: true } : { images: [await this.o.farm.render(job)], frames: false };
      if (this.reply(channel, message, answer)) this.jobs.done += 1;
    } catch (error) {
      const failure = error instanceof RenderError ? error : new RenderError('failed', (error as Error).message);
      // Once more, elsewhere or on a fresh page: unless the texture itself is bad or the time is up.
      if (failure.kind !== 'invalid_texture' && !message.fields.redelivered && Date.now() < deadline && this.channel === channel) {
        this.jobs.requeued += 1;
        channel.nack(message, false, true);
      } else if (this.reply(channel, message, { error: { kind: failure.kind, message: failure.message, zh: failure.zh } })) {
        this.jobs.failed += 1;
      }
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0) this.drained?.();
    }
  }

  /**
   * Publishes the answer, then acknowledges the job. On a channel that is gone nothing is sent: the
   * broker has handed the job to another node already.
   */
  private reply(channel: Channel, message: ConsumeMessage, answer: Answer): boolean {
    if (this.channel !== channel) return false;
    try {
      channel.sendToQueue(message.properties.replyTo as string, encodeAnswer(answer), { correlationId: message.properties.correlationId });
      channel.ack(message);
      return true;
    } catch {
      return false;
    }
  }

  /** Stops taking jobs, answers the ones it holds, then leaves the broker. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.reporting);
    const tag = this.consumer;
    this.consumer = null;
    if (tag) await this.channel?.cancel(tag).catch(() => {});
    // Instances learn now, not when this node's reports have aged out, that it takes no more jobs.
    if (this.channel) this.report(this.channel);
    if (this.inFlight > 0) await new Promise<void>((resolve) => { this.drained = resolve; });
    await this.link.close();
  }
}
