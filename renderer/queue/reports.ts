// What render nodes say about themselves over the broker, and what an API instance keeps of it.
import type { FarmHealth, FarmInfo, FarmStats } from '../farm.ts';
import { REPORT_EVERY_MS } from './wire.ts';

/** One node's report, published every REPORT_EVERY_MS on STATUS_EXCHANGE. */
export interface NodeReport {
  id: string; host: string; pid: number;
  /** When the node started (ISO 8601). */
  started: string;
  /** Jobs it takes from the queue at once (pages x batch size). */
  prefetch: number;
  info: FarmInfo;
  stats: FarmStats;
  state: FarmHealth['state'];
  /** Whether it takes jobs now (not while its farm cannot draw). */
  consuming: boolean;
  /** Jobs answered with an image, answered with an error, dropped past their deadline unrendered, handed back to the queue after a failure. */
  jobs: { done: number; failed: number; expired: number; requeued: number };
  /** The longest a job it took in the last interval had waited in the queue (ms), by the publisher's clock. */
  queueWaitMs: number;
}

/** A node not heard from in this long is gone (three reports missed). */
export const NODE_GONE_MS = 3 * REPORT_EVERY_MS;

/** The state of the queue and its nodes as one API instance sees them. */
export interface RemoteState {
  connected: boolean;
  /** Jobs in the broker's queue, and consumers on it (each node's channel is one), as last asked (every REPORT_EVERY_MS). */
  queue: { name: string; depth: number; consumers: number; checkedAt: string | null };
  /** Jobs this instance waits for, and the age of the oldest (ms). */
  pending: number;
  oldestPendingMs: number;
  /** Answers that came for no waiting job (a duplicate after a redelivery, one past its timeout), dropped. */
  ignoredAnswers: number;
  /** The nodes heard from in the last NODE_GONE_MS, newest report each. */
  nodes: Array<NodeReport & { seenMsAgo: number }>;
}

/** The recent reports, by node. */
export class NodeRoster {
  private readonly seen = new Map<string, { report: NodeReport; at: number }>();

  note(report: NodeReport): void {
    this.seen.set(report.id, { report, at: Date.now() });
  }

  /** Whether a node heard from recently takes jobs (asked for every job: builds nothing). */
  anyConsuming(): boolean {
    const now = Date.now();
    for (const { report, at } of this.seen.values()) if (report.consuming && now - at <= NODE_GONE_MS) return true;
    return false;
  }

  /** Nodes heard from recently; older ones are forgotten. */
  live(): Array<NodeReport & { seenMsAgo: number }> {
    const now = Date.now();
    const live = [];
    for (const [id, { report, at }] of this.seen) {
      if (now - at > NODE_GONE_MS) this.seen.delete(id);
      else live.push({ ...report, seenMsAgo: now - at });
    }
    return live;
  }
}
