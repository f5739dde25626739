// The main thread's handle on one page's worker thread (render-worker.ts): tasks go in by
// message and come back by id. A task whose signal aborts ends the thread at once (a page stuck
// in a frame cannot be interrupted from its own thread) and fails every task it held; the next
// task starts a fresh thread, which opens a fresh page.
import { Worker } from 'node:worker_threads';
import type { WorkerResult, WorkerTask } from './jobs.ts';

/** What a worker thread posts: a task's answer, or the target id of a page it opened. */
export type WorkerMessage = { id: number; result?: WorkerResult; error?: string } | { opened: string };

interface Waiting { resolve: (result: WorkerResult) => void; reject: (error: Error) => void }

export class PageWorker {
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 0;
  /** The DevTools target id of the page the thread has open, so the farm can close a stuck one. */
  targetId: string | null = null;
  /** Pages its threads have opened, in all. */
  opened = 0;

  private readonly slot: number;

  constructor(slot: number) {
    this.slot = slot;
  }

  run(task: WorkerTask, signal?: AbortSignal): Promise<WorkerResult> {
    signal?.throwIfAborted();
    const worker = this.thread();
    const id = this.nextId++;
    return new Promise<WorkerResult>((resolve, reject) => {
      const abort = () => this.end(worker, signal!.reason instanceof Error ? signal!.reason : new Error(String(signal!.reason)));
      signal?.addEventListener('abort', abort, { once: true });
      const done = () => signal?.removeEventListener('abort', abort);
      this.waiting.set(id, {
        resolve: (result) => { done(); resolve(result); },
        reject: (error) => { done(); reject(error); },
      });
      worker.postMessage({ id, task });
    });
  }

  /** Ends the thread (its page stays in the browser: the farm closes it by `targetId`). */
  async terminate(): Promise<void> {
    if (this.worker) await this.end(this.worker, new Error('the page worker was terminated'));
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL('./render-worker.ts', import.meta.url), { workerData: { slot: this.slot } });
    worker.on('message', (message: WorkerMessage) => {
      if ('opened' in message) {
        this.targetId = message.opened;
        this.opened += 1;
        return;
      }
      const waiting = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (message.error !== undefined) waiting?.reject(new Error(message.error));
      else waiting?.resolve(message.result!);
    });
    worker.on('error', (error) => void this.end(worker, error));
    worker.on('exit', () => void this.end(worker, new Error('the page worker exited')));
    this.worker = worker;
    return worker;
  }

  /** Forgets `worker` (when it is still the current one), fails what it held, stops it. */
  private async end(worker: Worker, reason: Error): Promise<void> {
    if (this.worker !== worker) return;
    this.worker = null;
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of waiting) w.reject(reason);
    await worker.terminate();
  }
}
