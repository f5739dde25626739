// The render farm: Piscina worker threads, each driving one page in a headless Chromium that the
// CDP relay thread starts and talks to over a pipe (browser.ts, cdp-relay.ts; no DevTools port);
// each page has a one-thread Piscina of its own (page-worker.ts), so the farm
// chooses which page a batch goes to. Jobs wait in one
// bounded queue, their clients taking turns (RenderJob.client); every idle page takes the queued jobs (up to a batch) in one call, so batches grow
// with load and latency stays low when idle; a busy page may already hold its next batch
// (BATCHES_PER_PAGE). A crashed page or browser is replaced and its jobs retried once, and so is a
// page in doubt: one whose WebGL context was lost or whose GPU process ended, which may have drawn
// a wrong image without an error (render-worker.ts). Every page draws a known answer when it
// opens; a fresh page that fails to has its browser replaced. A job has
// one timer: when it fires on a job a page holds, that page's thread is ended, the page closed and
// replaced, and the batch's other jobs retried once.
//
// Pages share one browser by default, with a GPU or without: each browser has one GPU process
// (SwiftShader without a GPU) that draws for all of its pages in turn. Two pages in two browsers
// once drew 3-12% more than two sharing one on two cores; with textures packed and the outer
// layer drawn from both sides the two measured the same (docs/benchmarks.md, issue #29), and a
// second browser costs its browser, GPU, zygote and utility processes (~45 MB PSS).
// RENDER_BROWSERS spreads the pages over more (a crash then takes down only some of them).
//
// A farm that cannot draw says so (health(): /ready answers 503 on it) and heals by itself: batches
// timing out in a row make the watchdog replace every browser; after batches failed in a row, or a
// browser that could not be started again, the farm is down and draws a known job (or starts its
// browsers) every few seconds until it draws again, since a balancer sends it no traffic to learn
// from meanwhile. While no browser runs, jobs are refused at once (503) instead of each waiting
// for its timeout.
import { existsSync } from 'node:fs';
import { RenderError, RenderFarmConfigError } from './errors.ts';
import { ownBytes } from '../shared/own-bytes.ts';
import type { Logger } from '../shared/log.ts';
import { launchBrowser, type LaunchedBrowser } from './browser.ts';
import { defaultSkin } from './default-skins.ts';
import { DEFAULT_GPU_BACKEND, GPU_BACKENDS, GPU_MODES, wantsGpu, type GpuBackend, type GpuMode } from './gpu.ts';
import { IN_DOUBT, SELF_CHECK_FAILED, toWireJob, type PageMemory, type RenderJob, type WireJob, type WorkerResult, type WorkerTask } from './jobs.ts';
import { PageWorker } from './page-worker.ts';
import type { RemoteState } from './queue/reports.ts';

export interface RenderFarmConfig {
  workers: number;
  gpu: GpuMode;
  /** The ANGLE backend on a GPU (ignored in software). Default `gl-egl`. */
  gpuBackend?: GpuBackend;
  /** Chromium to run; else a system Chromium, else the one inside @sparticuz/chromium. */
  chromiumPath?: string | null;
  /** Jobs waiting beyond this are refused with `overloaded` (503) at once. Default 512. */
  queueLimit?: number;
  /**
   * A job not answered in this time fails with `timeout`; a page still drawing it is given up and
   * replaced, and the other jobs of its batch are retried once. Default 10 s.
   */
  jobTimeoutMs?: number;
  /** Jobs one page draws in one frame. Default 8. */
  batchSize?: number;
  /** Chromium instances the pages are spread over. Default: one per worker without a GPU, else 1. */
  browsers?: number;
  /** A page whose JS heap passes this (read every 32 batches) is replaced between batches. Default 256 MiB. */
  pageHeapLimitBytes?: number;
  /**
   * An ES module file every page loads: its default export gets the page's API and returns the
   * one the worker calls (PageExtension, renderer/page/api.ts), to watch or change what a page
   * does. The tests make pages hang or draw wrong with it. Default none.
   */
  pageExtension?: string | null;
}

/** Checks every option before anything starts: a batch size of 0 used to make dispatch loop forever. */
function validate(config: RenderFarmConfig): void {
  const whole = (option: keyof RenderFarmConfig, min: number, max: number) => {
    const value = config[option];
    if (value === undefined && option !== 'workers') return;
    if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) throw new RenderFarmConfigError(option, `an integer from ${min} to ${max}`, value);
  };
  whole('workers', 1, 64);
  whole('queueLimit', 1, 1_000_000);
  whole('jobTimeoutMs', 100, 600_000);
  whole('batchSize', 1, 16);
  whole('browsers', 1, 64);
  whole('pageHeapLimitBytes', 1 << 20, 2 ** 40);
  const oneOf = (names: readonly string[]) => names.map((n) => `"${n}"`).join(', ');
  if (!GPU_MODES.includes(config.gpu)) throw new RenderFarmConfigError('gpu', oneOf(GPU_MODES), config.gpu);
  if (config.gpuBackend !== undefined && !GPU_BACKENDS.includes(config.gpuBackend)) throw new RenderFarmConfigError('gpuBackend', oneOf(GPU_BACKENDS), config.gpuBackend);
  // Else every page's thread would fail to start, and the farm with it, long after.
  if (config.pageExtension != null && !existsSync(config.pageExtension)) throw new RenderFarmConfigError('pageExtension', 'an existing file', config.pageExtension);
}

export interface FarmStats {
  workers: number; pagesAlive: number; queued: number; running: number; completed: number; failed: number; browserRestarts: number;
  /** Pages opened since the start, the first ones included: a page is replaced after a crash, a timeout, or past its memory bound. */
  pagesOpened: number;
  /** Pages replaced because what they drew could not be trusted: their WebGL context was lost, or their GPU process ended. */
  contextLosses: number;
  /** Fresh pages that failed their known-answer render: drew it unlike the farm's first pages, or could not draw it (their browser is replaced). */
  selfCheckFailures: number;
  /** Times the watchdog replaced every browser because batches kept timing out. */
  watchdogRestarts: number;
}

/** Whether the farm draws: `down` when it cannot (no page alive, no browser could start, or batches keep failing). */
export interface FarmHealth {
  state: 'ok' | 'degraded' | 'down';
  detail: string;
  /** When a batch was last drawn (ISO 8601), or null if none has been since the start. */
  lastDrawnAt: string | null;
  /** Batches failed since the last one drawn. */
  failedInARow: number;
  lastError: string | null;
}
export interface FarmInfo { browserVersion: string; webglRenderer: string; gpu: boolean; executable: string; browsers: number }

/**
 * What the skins service uses of a farm: RenderFarm in this process, or RemoteFarm
 * (renderer/queue/remote-farm.ts), whose render nodes run a RenderFarm each behind a broker.
 */
export interface Farm {
  render(job: RenderJob): Promise<Buffer>;
  renderFrames(job: RenderJob, yaws: number[]): Promise<Buffer[]>;
  stats(): FarmStats;
  info(): FarmInfo;
  health(): FarmHealth;
  trim(): Promise<void>;
  close(): Promise<void>;
  /** A remote farm's queue and nodes (absent in process). */
  remote?(): RemoteState;
}

/**
 * A page that is drawing may already hold its next batch, when at least half a batch waits: it
 * starts on it the moment it is done. Otherwise it sat idle until this (busy) thread had heard
 * back and dispatched again, about half the time under the embed load. Smaller leftovers wait
 * for a free page, so batches stay large. Embed p99 47.6 -> 44.4 ms (means of 5 alternating
 * pairs), for ~7% fewer requests/s.
 */
const BATCHES_PER_PAGE = 2;

/** Batches timed out in a row (none drawn between) after which the watchdog replaces every browser: replacing the stuck pages did not help. */
const WATCHDOG_TIMEOUTS = 2;
/**
 * Batches failed in a row (crashes, timeouts; none drawn between), for at least this long, after
 * which the farm counts as down. A GPU process killed under load fails a few batches in a row
 * too, for about a second, and the farm is not down then.
 */
const DOWN_AFTER_FAILURES = 3;
const DOWN_AFTER_MS = 5000;
/** How often a down farm tries to draw (or to start its browsers) again. */
const HEAL_EVERY_MS = 5000;
/** What a down farm draws to learn that it draws again: small, and the same skin every page's self-check uses. */
const HEAL_JOB: RenderJob = { kind: 'render', skin: defaultSkin('steve', false), slim: false, size: 32, yaw: 30, pitch: 20, shadow: false, outer: true, bg: null };

const queueFull = () => new RenderError('queue_full', 'the render queue is full', { zh: '渲染队列已满', retryAfterSeconds: 1 });
const shuttingDown = () => new RenderError('closed', 'the render farm is closed', { zh: '渲染池已关闭', retryAfterSeconds: 5 });
const noBrowser = () => new RenderError('unavailable', 'no browser could be started for the render farm; it tries again every few seconds', { zh: '渲染浏览器无法启动，正在重试', retryAfterSeconds: 5 });

interface Pending {
  job: RenderJob;
  /**
   * Its place in its client's turn (fair queueing): the round its client's queued work reaches with
   * it, in frames. The queue is kept in round order, so clients take turns and a client with a
   * hundred jobs queued holds another's one job back by at most one of its own.
   */
  round: number;
  attempts: number; resolve: (answer: Buffer | Buffer[]) => void; reject: (error: unknown) => void; timer: NodeJS.Timeout; done: boolean;
  /** Aborts the batch holding this job, while a page has it. */
  holder: AbortController | null;
}

/** One page: the worker thread that drives it, and the batches handed to it. */
interface PageSlot {
  worker: PageWorker; batches: number; slot: number;
  /**
   * Parked by the idle trim (its page closed), then opening again once work comes: no batch is
   * given to it meanwhile, so the first ones after an idle spell go to the open page at once.
   */
  parked: 'closed' | 'opening' | null;
  /** The opening (PageWorker.opened) last counted in doubt: its other batch reports the same page. */
  doubted: number;
}

export class RenderFarm implements Farm {
  private readonly config: Required<RenderFarmConfig>;
  private readonly log: Logger;
  private readonly pages: PageSlot[];
  private readonly browsers: LaunchedBrowser[];
  private relaunching: Promise<void> | null = null;
  /** Aborts a relaunch in progress when the farm closes (a launch can take long or hang). */
  private readonly closeSignal = new AbortController();
  private readonly queue: Pending[] = [];
  /** Jobs in batches handed to a page that was still drawing: they wait there, and count as queued. */
  private waitingAtPages = 0;
  private closed = false;
  private closing: Promise<void> | null = null;
  private readonly counters = { completed: 0, failed: 0, browserRestarts: 0, contextLosses: 0, selfCheckFailures: 0, watchdogRestarts: 0 };
  /** Batches failed, and timed out, since the last one drawn; when that was; the last failure. */
  private failedInARow = 0;
  private timedOutInARow = 0;
  private lastDrawnAt: number | null = null;
  /** When the batches failed in a row began failing. */
  private failingSince = 0;
  private lastError: string | null = null;
  /** The last relaunch could not start a browser: jobs are refused until one starts. */
  private launchFailed = false;
  /** While down: the timer that tries to draw (or launch) again. */
  private healing: NodeJS.Timeout | null = null;
  private infoCache: FarmInfo;
  /** The digest of the known-answer render, as the farm's first pages drew it; every page opened later must match it. */
  private selfCheck: string | null = null;
  /** Browsers whose fresh page failed its self-check: the next recovery replaces them. */
  private readonly suspect = new Set<LaunchedBrowser>();

  private constructor(config: Required<RenderFarmConfig>, log: Logger, browsers: LaunchedBrowser[]) {
    this.config = config;
    this.log = log;
    this.browsers = browsers;
    // Page number `slot` lives in browser slot % browsers.
    this.pages = Array.from({ length: config.workers }, (_, slot) => ({ batches: 0, slot, doubted: -1, parked: null, worker: new PageWorker(slot, BATCHES_PER_PAGE, config.pageExtension, (targetId) => this.closeTarget(slot, targetId)) }));
    const [first] = browsers;
    this.infoCache = { browserVersion: '', webglRenderer: '', gpu: first.gpu, executable: first.resolved.executablePath, browsers: browsers.length };
    for (const browser of browsers) this.watch(browser);
  }

  /**
   * Starts the browsers and warms every worker's page, so the first request pays no start-up.
   * When `stop` aborts meanwhile, what was started is closed and this rejects with its reason.
   * A farm asked to use the GPU that cannot start on it starts again in software, with a warning.
   */
  static async create(config: RenderFarmConfig, log: Logger, stop?: AbortSignal): Promise<RenderFarm> {
    validate(config);
    if (!wantsGpu(config.gpu)) return RenderFarm.start(config, log, stop);
    try {
      return await RenderFarm.start(config, log, stop);
    } catch (error) {
      if (stop?.aborted) throw error;
      // A GPU host whose driver or Chromium build cannot give WebGL a context (the bundled
      // Chromium has no ANGLE backend for NVIDIA's driver) still serves images, in software.
      log.warn('the render pages could not start on the GPU; rendering in software (SwiftShader)', { backend: config.gpuBackend ?? DEFAULT_GPU_BACKEND, err: (error as Error).message });
      return RenderFarm.start({ ...config, gpu: 'off' }, log, stop);
    }
  }

  private static async start(config: RenderFarmConfig, log: Logger, stop?: AbortSignal): Promise<RenderFarm> {
    const workers = config.workers;
    const gpu = wantsGpu(config.gpu);
    const full: Required<RenderFarmConfig> = {
      workers,
      gpu: gpu ? 'on' : 'off',
      gpuBackend: config.gpuBackend ?? DEFAULT_GPU_BACKEND,
      chromiumPath: config.chromiumPath ?? null,
      queueLimit: config.queueLimit ?? 512,
      jobTimeoutMs: config.jobTimeoutMs ?? 10_000,
      batchSize: config.batchSize ?? 8,
      browsers: Math.min(workers, Math.max(1, config.browsers ?? 1)),
      pageHeapLimitBytes: config.pageHeapLimitBytes ?? 256 << 20,
      pageExtension: config.pageExtension ?? null,
    };
    // All launches settle before a failure counts, so the browsers that did start are closed.
    const launches = await Promise.allSettled(Array.from({ length: full.browsers }, () => launchBrowser(full.chromiumPath, full.gpu, log, stop, full.gpuBackend)));
    const browsers = launches.flatMap((l) => (l.status === 'fulfilled' ? [l.value] : []));
    const failed = launches.find((l) => l.status === 'rejected');
    if (failed || stop?.aborted) {
      await Promise.all(browsers.map((b) => b.close()));
      throw stop?.aborted ? stop.reason : (failed as PromiseRejectedResult).reason;
    }
    const farm = new RenderFarm(full, log, browsers);
    // A stop while the pages warm up closes the farm, which fails the warm-up below.
    const closeOnStop = () => void farm.close();
    stop?.addEventListener('abort', closeOnStop, { once: true });
    // A page normally comes up in seconds, even on a loaded two-core host; one that has not in 20 s
    // is most likely stuck (seen once in CI), so it gets one fresh try of up to a minute.
    const warm = async (page: PageSlot) => {
      try {
        return await farm.probe(page, 'info', AbortSignal.timeout(20_000));
      } catch (error) {
        if (farm.closed) throw error;
        log.warn('a render page did not start; trying again', { err: (error as Error).message });
        return farm.probe(page, 'info', AbortSignal.timeout(60_000));
      }
    };
    try {
      const infos = await Promise.all(farm.pages.map(warm));
      // Nothing has gone wrong yet: the first pages set the known answer, and must agree on it.
      const digests = new Set(infos.map((i) => i.info!.selfCheck));
      if (digests.size > 1) throw new Error(`the render pages drew the self-check differently (${[...digests].join(', ')})`);
      farm.selfCheck = infos[0].info!.selfCheck;
      const webglRenderer = infos[0].info?.renderer ?? 'unknown';
      // GPU flags do not guarantee a GPU: the renderer string says what WebGL really runs on.
      const onGpu = full.gpu === 'on' && !/swiftshader|llvmpipe|software/i.test(webglRenderer);
      if (full.gpu === 'on' && !onGpu) log.warn('GPU rendering was asked for but WebGL runs in software', { webgl: webglRenderer });
      farm.infoCache = { ...farm.infoCache, browserVersion: await browsers[0].browser.version(), webglRenderer, gpu: onGpu };
    } catch (error) {
      await farm.close();
      throw stop?.aborted ? stop.reason : error;
    } finally {
      stop?.removeEventListener('abort', closeOnStop);
    }
    log.info('render farm ready', { workers, browsers: full.browsers, webgl: farm.infoCache.webglRenderer, browser: farm.infoCache.browserVersion, gpu: farm.infoCache.gpu });
    return farm;
  }

  private task(jobs: WireJob[], probe?: WorkerTask['probe']): WorkerTask {
    return { browsers: this.browsers.map((b) => ({ key: b.key, pid: b.pid })), jobs, pageHeapLimitBytes: this.config.pageHeapLimitBytes, selfCheck: this.selfCheck, probe };
  }

  /** Asks a page for its WebGL renderer or its memory; a page that does not answer by `signal` is replaced. */
  private async probe(page: PageSlot, probe: NonNullable<WorkerTask['probe']>, signal: AbortSignal): Promise<WorkerResult> {
    try {
      return await page.worker.run(this.task([], probe), signal);
    } catch (error) {
      if (signal.aborted) this.closeStuck(page);
      throw error;
    }
  }

  /** What each page holds now (JS heap, textures), for operations and tests. */
  async pageMemory(): Promise<PageMemory[]> {
    return Promise.all(this.pages.map(async (page) => (await this.probe(page, 'memory', AbortSignal.timeout(this.config.jobTimeoutMs))).memory!));
  }

  /**
   * Gives back what a load left (the service calls this when idle): the first page, if it has
   * drawn, is replaced by a fresh one; the others are parked (closed: ~50 MB each of a renderer
   * process and the GPU process's buffers) and open again once work comes, the first batches going
   * to the open page meanwhile (unpark); each render thread collects its garbage. A page that does
   * not answer in time is replaced.
   */
  async trim(): Promise<void> {
    if (this.closed) return;
    await Promise.all(this.pages.map(async (page, n) => {
      try {
        await this.probe(page, n === 0 ? 'trim' : 'park', AbortSignal.timeout(this.config.jobTimeoutMs));
        if (n > 0 && page.batches === 0 && this.queue.length === 0) page.parked = 'closed';
      } catch {
        // Replaced (probe) or gone with its browser: the next batch opens a page as after a crash.
      }
    }));
  }

  /** Opens the parked pages again (an 'info' probe opens a page), each taking batches once it answers. */
  private unpark(): void {
    for (const page of this.pages) {
      if (page.parked !== 'closed') continue;
      page.parked = 'opening';
      void this.probe(page, 'info', AbortSignal.timeout(this.config.jobTimeoutMs)).catch(() => {}).finally(() => {
        page.parked = null;
        this.dispatch();
      });
    }
  }

  render(job: RenderJob): Promise<Buffer> {
    return this.enqueue(job) as Promise<Buffer>;
  }

  /**
   * The frames of a turntable: `job` drawn at each of `yaws` (its own `yaw` unused), one PNG per
   * yaw in order. One job in the queue, a batch of its own, one call into a page, which draws
   * the frames side by side in one WebGL frame (so 36 frames cost one job's overhead, not 36),
   * and they succeed, fail or are retried together. Keep `size` x `yaws.length` modest: the
   * page's frame holds them all (4 tiles a row).
   */
  renderFrames(job: RenderJob, yaws: number[]): Promise<Buffer[]> {
    if (job.kind !== 'render' || yaws.length === 0) return Promise.reject(new RenderError('failed', 'frames are drawn for renders, at least one'));
    // A turntable waits in the queue as one job but is drawn as many: counted by its frames here,
    // or 512 queued turntables would hold every job queued after them past its timeout. One is
    // taken whenever nothing waits, whatever the limit.
    const waiting = this.queue.reduce((n, p) => n + (p.job.yaws?.length ?? 1), this.waitingAtPages);
    if (waiting > 0 && waiting + yaws.length > this.config.queueLimit) return Promise.reject(queueFull());
    return this.enqueue({ ...job, yaws }) as Promise<Buffer[]>;
  }

  private enqueue(job: RenderJob): Promise<Buffer | Buffer[]> {
    if (this.closed) return Promise.reject(shuttingDown());
    if (this.launchFailed) return Promise.reject(noBrowser());
    if (this.queue.length + this.waitingAtPages >= this.config.queueLimit) return Promise.reject(queueFull());
    return new Promise<Buffer | Buffer[]>((resolve, reject) => {
      const pending: Pending = {
        job, round: 0, attempts: 0, resolve, reject, done: false, holder: null,
        timer: setTimeout(() => {
          this.settle(pending, new RenderError('timeout', 'timeout', { zh: '超时' }));
          pending.holder?.abort(new Error('a job of the batch timed out'));
        }, this.config.jobTimeoutMs),
      };
      this.queueInTurn(pending);
      this.dispatch();
    });
  }

  /**
   * Queues a job after its client's queued jobs, in the first round they leave free: one client's
   * flood of jobs no longer holds every other client's behind it (issue #38). A turntable counts
   * as its frames.
   */
  private queueInTurn(pending: Pending): void {
    const client = pending.job.client ?? '';
    let last: Pending | undefined;
    for (let i = this.queue.length - 1; i >= 0 && !last; i -= 1) if ((this.queue[i].job.client ?? '') === client) last = this.queue[i];
    pending.round = last ? last.round + (last.job.yaws?.length ?? 1) : (this.queue[0]?.round ?? 0);
    let at = this.queue.length;
    while (at > 0 && this.queue[at - 1].round > pending.round) at -= 1;
    this.queue.splice(at, 0, pending);
  }

  private settle(pending: Pending, result: Buffer | Buffer[] | Error): void {
    if (pending.done) return;
    pending.done = true;
    clearTimeout(pending.timer);
    if (!(result instanceof Error)) {
      this.counters.completed += 1;
      pending.resolve(result);
    } else {
      this.counters.failed += 1;
      pending.reject(result);
    }
  }

  /** Hands queued jobs to pages, a batch each. */
  private dispatch(): void {
    if (this.queue.length > 0) this.unpark();
    while (this.queue.length > 0 && !this.relaunching) {
      const page = this.pageForBatch();
      if (!page) return;
      const batch = this.takeBatch().filter((p) => !p.done);
      if (batch.length > 0) void this.runBatch(page, batch);
    }
  }

  /**
   * The next batch from the queue: up to `batchSize` single images, or one turntable alone (its
   * frames fill a page's frame already; two of them in one would make it too tall).
   */
  private takeBatch(): Pending[] {
    if (this.queue[0].job.yaws) return this.queue.splice(0, 1);
    let n = 1;
    while (n < this.config.batchSize && n < this.queue.length && !this.queue[n].job.yaws) n += 1;
    return this.queue.splice(0, n);
  }

  /** An idle page; else, when at least half a batch waits, a page with room (BATCHES_PER_PAGE). */
  private pageForBatch(): PageSlot | undefined {
    const open = this.pages.filter((p) => p.parked === null);
    const idle = open.find((p) => p.batches === 0);
    if (idle || this.queue.length < Math.ceil(this.config.batchSize / 2)) return idle;
    return open.find((p) => p.batches < BATCHES_PER_PAGE);
  }

  private async runBatch(page: PageSlot, batch: Pending[]): Promise<void> {
    const early = page.batches > 0;
    page.batches += 1;
    if (early) this.waitingAtPages += batch.length;
    const holder = new AbortController();
    for (const pending of batch) pending.holder = holder;
    let images: WorkerResult['images'] = [];
    let failure: unknown = null;
    try {
      images = (await page.worker.run(this.task(batch.map((p) => toWireJob(p.job))), holder.signal)).images ?? [];
    } catch (error) {
      failure = error;
      if (holder.signal.aborted) this.closeStuck(page);
      if (!this.closed) {
        this.noteFailure(page, error as Error, batch.length, holder.signal.aborted);
        await this.recover();
      }
    }
    if (!failure) this.noteDrawn();
    for (const pending of batch) pending.holder = null;
    // Not running any more before anyone hears the outcome: stats() agree with what callers saw.
    page.batches -= 1;
    if (early) this.waitingAtPages -= batch.length;
    if (failure && this.closed) {
      for (const pending of batch) this.settle(pending, shuttingDown());
    } else if (failure) {
      // Once more each, ahead of newer jobs; a second failure is the job's own. A page that
      // failed its self-check drew none of them: that costs no attempt (its browser is replaced,
      // and a job's own timer still bounds the tries).
      if (!(failure as Error).message.startsWith(SELF_CHECK_FAILED)) for (const pending of batch) pending.attempts += 1;
      for (const pending of batch.filter((p) => p.attempts > 1)) this.settle(pending, new RenderError('crashed', 'the renderer crashed', { zh: '渲染器崩溃', cause: failure }));
      this.queue.unshift(...batch.filter((p) => !p.done));
    } else {
      batch.forEach((pending, i) => {
        const image = images[i];
        if (Array.isArray(image)) this.settle(pending, image.map(ownBytes));
        else if (image && !('error' in image)) this.settle(pending, ownBytes(image));
        else this.settle(pending, new RenderError('failed', image && 'error' in image ? image.error.slice(0, 120) : 'no image'));
      });
    }
    this.dispatch();
  }

  /**
   * Logs a failed batch and counts a page in doubt (once per page) or a failed self-check (whose
   * browser the recovery that follows replaces).
   */
  private noteFailure(page: PageSlot, error: Error, jobs: number, timedOut: boolean): void {
    const browser = this.browsers[page.slot % this.browsers.length];
    if ((this.failedInARow += 1) === 1) this.failingSince = Date.now();
    this.lastError = timedOut ? 'a batch timed out' : error.message.slice(0, 200);
    if (this.failedInARow === DOWN_AFTER_FAILURES) this.startHealing();
    if (timedOut && (this.timedOutInARow += 1) >= WATCHDOG_TIMEOUTS) {
      // A page that hung was replaced, and the next one hung too: the browser (its GPU process, a
      // paused or wedged one) is what fails, so every browser is started again.
      this.timedOutInARow = 0;
      this.counters.watchdogRestarts += 1;
      for (const b of this.browsers) this.suspect.add(b);
      this.log.warn('render batches keep timing out; restarting chromium', { timeouts: WATCHDOG_TIMEOUTS, jobs });
      return;
    }
    if (error.message.startsWith(SELF_CHECK_FAILED)) {
      this.counters.selfCheckFailures += 1;
      this.suspect.add(browser);
      this.log.warn('a fresh render page failed its self-check; restarting its browser', { err: error.message, jobs });
    } else if (error.message.startsWith(IN_DOUBT)) {
      if (page.doubted === page.worker.opened) return;
      page.doubted = page.worker.opened;
      this.counters.contextLosses += 1;
      this.log.warn('a render page lost its WebGL context; its jobs run again on a fresh page', { err: error.message, jobs });
    } else {
      this.log.warn('render batch failed', { err: error.message, jobs });
    }
  }

  /** A batch was drawn: the farm draws, whatever failed before. */
  private noteDrawn(): void {
    this.failedInARow = 0;
    this.timedOutInARow = 0;
    this.lastDrawnAt = Date.now();
    if (this.healing) {
      clearInterval(this.healing);
      this.healing = null;
      this.log.info('the render farm draws again');
    }
  }

  /**
   * Down: every HEAL_EVERY_MS, starts the browsers that are not running, or draws HEAL_JOB when no
   * job is queued or drawing (the jobs that are say as much). Ends when a batch is drawn.
   */
  private startHealing(): void {
    if (this.healing || this.closed) return;
    this.log.warn('render batches keep failing; the farm tries to draw every few seconds until one is drawn', { failed_in_a_row: this.failedInARow, err: this.lastError });
    this.healing = setInterval(() => {
      if (this.closed || this.relaunching) return;
      if (this.launchFailed) void this.recover();
      else if (this.queue.length === 0 && this.pages.every((p) => p.batches === 0)) void this.render(HEAL_JOB).catch(() => {});
    }, HEAL_EVERY_MS);
    this.healing.unref();
  }

  /**
   * After a page's thread was ended for taking too long: closes the page it had open, which may
   * still be drawing (a frame cannot be interrupted from its own thread), so it stops taking a
   * core and memory. The thread that comes next opens a new page.
   */
  private closeStuck(page: PageSlot): void {
    if (page.worker.targetId) this.closeTarget(page.slot, page.worker.targetId);
  }

  /** Closes a page (closing one already closed is a no-op). */
  private closeTarget(slot: number, targetId: string): void {
    void this.browsers[slot % this.browsers.length]?.closeTarget(targetId);
  }

  private watch(browser: LaunchedBrowser): void {
    browser.browser.once('disconnected', () => {
      if (!this.closed && this.browsers.includes(browser)) void this.recover();
    });
  }

  /**
   * After a failure: replaces every browser that no longer answers or failed a self-check (its
   * pages reconnect on their next task). A page that crashed in a live browser was already
   * dropped by its worker. One recovery at a time; dispatch waits for it.
   */
  private recover(): Promise<void> {
    this.relaunching ??= (async () => {
      try {
        for (const [i, dead] of this.browsers.entries()) {
          const suspect = this.suspect.delete(dead);
          if (!suspect && await dead.alive()) continue;
          this.counters.browserRestarts += 1;
          this.log.warn(suspect ? 'chromium failed a self-check; starting a new one' : 'chromium died; starting a new one', { browser: i });
          await dead.close().catch(() => {});
          this.browsers[i] = await launchBrowser(this.config.chromiumPath, this.config.gpu, this.log, this.closeSignal.signal, this.config.gpuBackend);
          this.watch(this.browsers[i]);
        }
        this.launchFailed = false;
      } catch (error) {
        if (!this.closed) {
          this.launchFailed = true;
          this.lastError = `chromium could not be started: ${(error as Error).message.split('\n')[0]}`;
          this.log.error('chromium restart failed', { err: error });
          // Queued jobs would each wait for their timeout: they are told now.
          for (const pending of this.queue.splice(0)) this.settle(pending, noBrowser());
          this.startHealing();
        }
      } finally {
        this.relaunching = null;
        this.dispatch();
      }
    })();
    return this.relaunching;
  }

  /** The browser processes (for operations and tests that need to kill one). */
  browserPids(): number[] {
    return this.browsers.map((b) => b.pid);
  }

  stats(): FarmStats {
    // Page n lives in browser n % browsers.
    const pagesAlive = this.pages.filter((_, n) => this.browsers[n % this.browsers.length].browser.connected).length;
    return {
      workers: this.config.workers, pagesAlive, queued: this.queue.length + this.waitingAtPages, running: this.pages.reduce((n, p) => n + p.batches, 0),
      ...this.counters, pagesOpened: this.pages.reduce((n, p) => n + p.worker.opened, 0),
    };
  }

  info(): FarmInfo {
    return this.infoCache;
  }

  /** Whether the farm draws now, for /ready and /status. */
  health(): FarmHealth {
    const { pagesAlive, workers } = this.stats();
    const facts = { lastDrawnAt: this.lastDrawnAt === null ? null : new Date(this.lastDrawnAt).toISOString(), failedInARow: this.failedInARow, lastError: this.lastError };
    const pages = `${pagesAlive} of ${workers} pages alive`;
    if (this.launchFailed) return { state: 'down', detail: `${pages}; ${this.lastError}`, ...facts };
    if (pagesAlive === 0) return { state: 'down', detail: pages, ...facts };
    if (this.failedInARow >= DOWN_AFTER_FAILURES && Date.now() - this.failingSince >= DOWN_AFTER_MS) return { state: 'down', detail: `${pages}; ${this.failedInARow} batches failed in a row (${this.lastError})`, ...facts };
    if (this.relaunching) return { state: 'degraded', detail: `${pages}; restarting chromium`, ...facts };
    if (this.failedInARow > 0 || pagesAlive < workers) return { state: 'degraded', detail: `${pages}; ${this.failedInARow} batches failed since the last drawn`, ...facts };
    return { state: 'ok', detail: pages, ...facts };
  }

  /** Refuses new jobs, fails queued ones, ends the workers and the browsers. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      if (this.healing) clearInterval(this.healing);
      for (const pending of this.queue.splice(0)) this.settle(pending, shuttingDown());
      this.closeSignal.abort(shuttingDown());
      await this.relaunching;
      await Promise.all(this.pages.map((p) => p.worker.terminate()));
      await Promise.all(this.browsers.map((b) => b.close()));
    })();
    return this.closing;
  }
}
