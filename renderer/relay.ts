// The main thread's handle on the CDP relay thread (cdp-relay.ts): one per process, started on
// first use. It launches and closes browsers there and forwards the connection requests of the
// page workers (their ports); the CDP traffic itself never passes this thread, but for the
// main thread's own small connection. The thread holds the process open only while a request
// waits on it; should it end, its browsers end with it (their pipes and parent-death signal) and
// the next launch starts a new one.
import { Worker } from 'node:worker_threads';
import type { ConnectRequest } from './relay-transport.ts';

export type RelayRequest =
  | { re: number; op: 'launch'; browser: string; executablePath: string; args: string[]; env: NodeJS.ProcessEnv }
  | { re: number; op: 'close'; browser: string };
/** The answer to a request: the pid of a launched browser, or why it failed. */
export interface RelayReply { re: number; pid?: number; error?: string }

type Body<T> = T extends unknown ? Omit<T, 're'> : never;

class Relay {
  private readonly thread = new Worker(new URL('./cdp-relay.ts', import.meta.url));
  private readonly waiting = new Map<number, { resolve: (reply: RelayReply) => void; reject: (error: Error) => void }>();
  private lastRe = 0;

  constructor() {
    this.thread.unref();
    this.thread.on('message', (reply: RelayReply) => {
      const waiter = this.waiting.get(reply.re);
      this.waiting.delete(reply.re);
      if (this.waiting.size === 0) this.thread.unref();
      if (reply.error === undefined) waiter?.resolve(reply);
      else waiter?.reject(new Error(reply.error));
    });
    let failure = '';
    this.thread.on('error', (error) => { failure = `: ${error.message}`; });
    this.thread.once('exit', (code) => {
      if (current === this) current = null;
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`the CDP relay thread ended with ${code}${failure}`));
      this.waiting.clear();
    });
  }

  request(body: Body<RelayRequest>): Promise<RelayReply> {
    const re = ++this.lastRe;
    this.thread.ref();
    return new Promise((resolve, reject) => {
      this.waiting.set(re, { resolve, reject });
      this.thread.postMessage({ ...body, re });
    });
  }

  connect(request: ConnectRequest): void {
    this.thread.postMessage(request, [request.port]);
  }
}

let current: Relay | null = null;

/** The process's relay, started now if none runs. */
export function relay(): Relay {
  return current ??= new Relay();
}
