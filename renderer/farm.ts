// The render farm: a Piscina pool of workers, each driving one page of a shared headless
// Chromium. Jobs wait in one bounded queue; every free worker takes the queued jobs (up to a
// batch) in one call, so batches grow with load and latency stays low when idle. A crashed
// browser is replaced and its jobs retried once.
import { Piscina } from 'piscina';
import { ApiError } from '../shared/errors.ts';
import type { Logger } from '../shared/log.ts';
import { launchBrowser, type GpuMode, type LaunchedBrowser } from './browser.ts';
import { toWireJob, type RenderJob, type WorkerResult, type WorkerTask } from './jobs.ts';

export interface RenderFarmConfig { workers: number; chromiumPath: string | null; gpu: GpuMode; queueLimit: number; jobTimeoutMs: number; batchSize?: number }

export interface FarmStats { workers: number; pagesAlive: number; queued: number; running: number; completed: number; failed: number; browserRestarts: number }
export interface FarmInfo { browserVersion: string; webglRenderer: string; gpu: boolean; executable: string }

interface Pending { job: RenderJob; attempts: number; resolve: (png: Buffer) => void; reject: (error: unknown) => void; timer: NodeJS.Timeout; done: boolean }

export class RenderFarm {
  private readonly config: Required<RenderFarmConfig>;
  private readonly log: Logger;
  private readonly pool: Piscina<WorkerTask, WorkerResult>;
  private browser: LaunchedBrowser;
  private relaunching: Promise<void> | null = null;
  private readonly queue: Pending[] = [];
  private running = 0;
  private closed = false;
  private readonly counters = { completed: 0, failed: 0, browserRestarts: 0 };
  private infoCache: FarmInfo;

  private constructor(config: Required<RenderFarmConfig>, log: Logger, browser: LaunchedBrowser) {
    this.config = config;
    this.log = log;
    this.browser = browser;
    this.pool = new Piscina<WorkerTask, WorkerResult>({
      filename: new URL('./render-worker.ts', import.meta.url).href,
      minThreads: config.workers,
      maxThreads: config.workers,
      concurrentTasksPerWorker: 1,
      idleTimeout: Number.MAX_SAFE_INTEGER,
    });
    this.infoCache = { browserVersion: '', webglRenderer: '', gpu: browser.gpu, executable: browser.resolved.executablePath };
    this.watch(browser);
  }

  /** Starts the browser and warms every worker's page, so the first request pays no start-up. */
  static async create(config: RenderFarmConfig, log: Logger): Promise<RenderFarm> {
    const full = { batchSize: 8, ...config, workers: Math.max(1, config.workers) };
    const farm = new RenderFarm(full, log, await launchBrowser(config.chromiumPath, config.gpu, log));
    const warm = async () => {
      try {
        return await farm.pool.run({ endpoint: farm.browser.wsEndpoint, jobs: [], info: true });
      } catch (error) {
        log.warn('a render page did not start; trying again', { err: (error as Error).message });
        return farm.pool.run({ endpoint: farm.browser.wsEndpoint, jobs: [], info: true });
      }
    };
    const infos = await Promise.all(Array.from({ length: full.workers }, warm));
    farm.infoCache = { ...farm.infoCache, browserVersion: await farm.browser.browser.version(), webglRenderer: infos[0].info?.renderer ?? 'unknown' };
    log.info('render farm ready', { workers: full.workers, webgl: farm.infoCache.webglRenderer, browser: farm.infoCache.browserVersion, gpu: farm.infoCache.gpu });
    return farm;
  }

  render(job: RenderJob): Promise<Buffer> {
    if (this.closed) return Promise.reject(new ApiError('overloaded', { detail: 'render farm closed', retryAfter: 5 }));
    if (this.queue.length >= this.config.queueLimit) {
      return Promise.reject(new ApiError('overloaded', { detail: '渲染队列已满', retryAfter: 1 }));
    }
    return new Promise<Buffer>((resolve, reject) => {
      const pending: Pending = {
        job, attempts: 0, resolve, reject, done: false,
        timer: setTimeout(() => this.settle(pending, new ApiError('render_failed', { detail: 'timeout' })), this.config.jobTimeoutMs),
      };
      this.queue.push(pending);
      this.dispatch();
    });
  }

  private settle(pending: Pending, result: Buffer | Error): void {
    if (pending.done) return;
    pending.done = true;
    clearTimeout(pending.timer);
    if (Buffer.isBuffer(result)) {
      this.counters.completed += 1;
      pending.resolve(result);
    } else {
      this.counters.failed += 1;
      pending.reject(result);
    }
  }

  /** Hands queued jobs to free workers, a batch each. */
  private dispatch(): void {
    while (this.running < this.config.workers && this.queue.length > 0 && !this.relaunching) {
      const batch = this.queue.splice(0, this.config.batchSize).filter((p) => !p.done);
      if (batch.length === 0) continue;
      this.running += 1;
      void this.runBatch(batch).finally(() => {
        this.running -= 1;
        this.dispatch();
      });
    }
  }

  private async runBatch(batch: Pending[]): Promise<void> {
    const browser = this.browser;
    try {
      const result = await this.pool.run({ endpoint: browser.wsEndpoint, jobs: batch.map((p) => toWireJob(p.job)) });
      const images = result.images ?? [];
      batch.forEach((pending, i) => {
        const image = images[i];
        if (image && !('error' in image)) this.settle(pending, Buffer.from(image.buffer, image.byteOffset, image.byteLength));
        else this.settle(pending, new ApiError('render_failed', { detail: image && 'error' in image ? image.error.slice(0, 120) : 'no image' }));
      });
    } catch (error) {
      this.log.warn('render batch failed', { err: (error as Error).message, jobs: batch.length });
      await this.recover(browser);
      for (const pending of batch) {
        pending.attempts += 1;
        if (pending.attempts > 1) this.settle(pending, new ApiError('render_failed', { detail: 'renderer crashed', cause: error }));
        else if (!pending.done) this.queue.unshift(pending);
      }
    }
  }

  private watch(browser: LaunchedBrowser): void {
    browser.browser.once('disconnected', () => {
      if (!this.closed && this.browser === browser) void this.recover(browser);
    });
  }

  /**
   * Replaces `failed` (pages reconnect on their next task). Liveness probes right after a crash
   * can still see the old connection as up, so a failed batch always means a new browser; one
   * that was already replaced by a concurrent call is left alone.
   */
  private recover(failed: LaunchedBrowser): Promise<void> {
    if (this.relaunching) return this.relaunching;
    if (this.browser !== failed || this.closed) return Promise.resolve();
    this.relaunching = (async () => {
      this.counters.browserRestarts += 1;
      this.log.warn('chromium died; starting a new one');
      try {
        await this.browser.close().catch(() => {});
        this.browser = await launchBrowser(this.config.chromiumPath, this.config.gpu, this.log);
        this.watch(this.browser);
      } catch (error) {
        this.log.error('chromium restart failed', { err: error });
      } finally {
        this.relaunching = null;
        this.dispatch();
      }
    })();
    return this.relaunching;
  }

  /** The browser process (for operations and tests that need to kill it). */
  browserPid(): number | undefined {
    return this.browser.browser.process()?.pid;
  }

  stats(): FarmStats {
    return {
      workers: this.config.workers,
      pagesAlive: this.browser.browser.connected ? this.config.workers : 0,
      queued: this.queue.length,
      running: this.running,
      ...this.counters,
    };
  }

  info(): FarmInfo {
    return this.infoCache;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) this.settle(pending, new ApiError('overloaded', { detail: 'shutting down', retryAfter: 5 }));
    await this.pool.destroy();
    await this.browser.close();
  }
}
