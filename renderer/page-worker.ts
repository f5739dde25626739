// The main thread's handle on one page: a Piscina of one thread (render-worker.ts), so the farm
// picks the page and Piscina carries the tasks, errors and exits. A task whose signal aborts
// makes Piscina end the thread at once (a page stuck in a frame cannot be interrupted from its
// own thread), which fails the other task it held; the pool then starts a fresh thread, whose
// next task opens a fresh page.
import { Piscina } from 'piscina';
import type { WorkerResult, WorkerTask } from './jobs.ts';
import { relay } from './relay.ts';
import type { ConnectRequest } from './relay-transport.ts';

/**
 * What a worker thread posts besides task results (Piscina re-emits it on the pool): the target
 * id of a page it opened, or a request for a connection to a browser, forwarded to the relay.
 */
export interface OpenedMessage { opened: string }

/** What each thread is started with: its page's number, and the page extension its pages load (RenderFarmConfig.pageExtension). */
export interface PageWorkerData { slot: number; pageExtension: string | null }

export class PageWorker {
  private readonly pool: Piscina<WorkerTask, WorkerResult>;
  /** The DevTools target id of the page the thread has open, so the farm can close a stuck one. */
  targetId: string | null = null;
  /** Pages its threads have opened, in all. */
  opened = 0;

  /**
   * Page number `slot`, drawing up to `tasksAtOnce` batches at a time, its pages loading
   * `pageExtension` (null: none). `orphaned` gets the target id of a page left behind when a new
   * thread opened its own (the old thread died for any reason): nothing else would close it.
   */
  constructor(slot: number, tasksAtOnce: number, pageExtension: string | null, orphaned: (targetId: string) => void) {
    this.pool = new Piscina<WorkerTask, WorkerResult>({
      filename: new URL('./render-worker.ts', import.meta.url).href,
      minThreads: 1,
      maxThreads: 1,
      concurrentTasksPerWorker: tasksAtOnce,
      idleTimeout: Number.MAX_SAFE_INTEGER,
      // Piscina freezes an idle thread in Atomics.wait, event loop and all, CDP events included:
      // so the relay, not the thread, lets a new target run (cdp-relay.ts, route()).
      workerData: { slot, pageExtension } satisfies PageWorkerData,
      // A guard, not a budget: a thread holds a few MB (its texture mirror, a batch in flight).
      // Reaching it ends the thread; its batches are retried once and its page is closed.
      resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 16 },
      // Piscina's own balancer gives a thread running a task with a signal nothing more (its
      // usage reads as Infinity), and every task here has one: this one fills the thread up to
      // `tasksAtOnce` regardless.
      loadBalancer: (_task, workers) => workers.find((w) => w.isRunningAbortableTask || w.currentUsage < tasksAtOnce) ?? null,
    });
    this.pool.on('message', (message: OpenedMessage | ConnectRequest) => {
      if ('connect' in message) return relay().connect(message);
      if (this.targetId && this.targetId !== message.opened) orphaned(this.targetId);
      this.targetId = message.opened;
      this.opened += 1;
    });
    // A thread that failed with no task on it: Piscina has replaced it already, and the next task opens a new page.
    this.pool.on('error', () => {});
  }

  run(task: WorkerTask, signal?: AbortSignal): Promise<WorkerResult> {
    return this.pool.run(task, { signal });
  }

  /** Ends the thread for good (its page stays in the browser: the farm closes the browsers). */
  terminate(): Promise<void> {
    return this.pool.destroy();
  }
}
