// One connection to the broker that comes back by itself: connected at start and again after
// every loss, with a growing pause between tries (250 ms doubling to 10 s, with jitter, so many
// instances do not knock at once). `open` sets up the channels of each new connection; `lost`
// hears of a loss, so what waited on the old connection is told at once.
import { connect, type Channel, type ChannelModel } from 'amqplib';
import type { Logger } from '../../shared/log.ts';
import { StateLog } from '../../shared/log-state.ts';
import { RENDER_QUEUE, STATUS_EXCHANGE } from './wire.ts';

/**
 * Heartbeats every 5 s: a node that hangs (SIGSTOP, a wedged event loop) misses two and the broker
 * closes its connection, handing its unacknowledged jobs to another node, in about 10 s.
 */
const HEARTBEAT_SECONDS = 5;
/** A broker host that drops packets would otherwise hold a try (and the service's start) for the system's TCP timeout, minutes. */
const CONNECT_TIMEOUT_MS = 5000;
const FIRST_PAUSE_MS = 250;
const LONGEST_PAUSE_MS = 10_000;

export interface LinkOptions {
  url: string;
  /** Shown in the broker's connection list (rabbitmqctl list_connections client_properties). */
  name: string;
  log: Logger;
  open(connection: ChannelModel): Promise<void>;
  lost(error: Error): void;
}

/** The URL with the heartbeat asked for, unless it asks for one itself. */
function withHeartbeat(url: string): string {
  const parsed = new URL(url);
  if (!parsed.searchParams.has('heartbeat')) parsed.searchParams.set('heartbeat', String(HEARTBEAT_SECONDS));
  return parsed.href;
}

/** The URL without its password, for logs. */
export function shownBrokerUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.href;
}

export class BrokerLink {
  private readonly o: LinkOptions;
  private connection: ChannelModel | null = null;
  private closed = false;
  private tries = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly failing: StateLog;
  /** Settles when the first try (successful or not) is over. */
  readonly firstTry: Promise<void>;
  private firstTried!: () => void;

  constructor(o: LinkOptions) {
    this.o = o;
    this.failing = new StateLog(o.log, 'the render queue broker cannot be reached; trying again', { recovered: 'connected to the render queue broker again', intervalMs: 30_000 });
    this.firstTry = new Promise((resolve) => { this.firstTried = resolve; });
    void this.connectNow();
  }

  get connected(): boolean {
    return this.connection !== null;
  }

  private async connectNow(): Promise<void> {
    this.timer = null;
    let connection: ChannelModel | null = null;
    try {
      // noDelay: amqplib leaves Nagle's algorithm on, which held each job and answer back ~40 ms
      // waiting for the peer's delayed ACK (docs/benchmarks.md, "Render nodes over RabbitMQ").
      connection = await connect(withHeartbeat(this.o.url), { timeout: CONNECT_TIMEOUT_MS, noDelay: true, clientProperties: { connection_name: this.o.name } });
      const opened = connection;
      // 'close' follows every 'error'; the listener keeps an error from being thrown.
      opened.on('error', () => {});
      opened.once('close', (error?: Error) => this.onClose(opened, error));
      if (this.closed) return void await opened.close().catch(() => {});
      await this.o.open(opened);
      this.connection = opened;
      this.tries = 0;
      this.failing.clear();
      this.o.log.info('connected to the render queue broker', { url: shownBrokerUrl(this.o.url) });
    } catch (error) {
      await connection?.close().catch(() => {});
      if (!this.closed) {
        this.failing.hit({ url: shownBrokerUrl(this.o.url), err: (error as Error).message });
        this.retry();
      }
    } finally {
      this.firstTried();
    }
  }

  private onClose(connection: ChannelModel, error?: Error): void {
    // A connection that failed while it was being opened is retried by connectNow.
    if (this.connection !== connection) return;
    this.connection = null;
    if (this.closed) return;
    this.o.log.warn('lost the render queue broker; reconnecting', { err: error?.message ?? 'closed by the broker' });
    this.o.lost(error ?? new Error('the broker closed the connection'));
    this.retry();
  }

  private retry(): void {
    const pause = Math.min(LONGEST_PAUSE_MS, FIRST_PAUSE_MS * 2 ** this.tries);
    this.tries += 1;
    this.timer = setTimeout(() => void this.connectNow(), pause / 2 + Math.random() * pause / 2);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const connection = this.connection;
    this.connection = null;
    await connection?.close().catch(() => {});
  }
}

/**
 * A channel on `connection` with the render queue and the node reports' exchange declared. A
 * channel the broker closed (a protocol error) takes its connection along, so the link makes both
 * again; `current` tells whether the channel is still the one in use (a replaced one's close is
 * nobody's business).
 */
export async function renderChannel(connection: ChannelModel, current: (channel: Channel) => boolean): Promise<Channel> {
  const channel = await connection.createChannel();
  channel.on('error', () => {});
  channel.once('close', () => {
    if (current(channel)) void connection.close().catch(() => {});
  });
  await channel.assertQueue(RENDER_QUEUE, { durable: true });
  await channel.assertExchange(STATUS_EXCHANGE, 'fanout', { durable: false });
  return channel;
}
