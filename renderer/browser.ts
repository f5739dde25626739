// Finding and starting the headless Chromium the render pages live in: the configured path, else
// a system Chromium, else the one shipped inside @sparticuz/chromium (works with no apt at all).
// Without a GPU WebGL runs on SwiftShader (ANGLE's software Vulkan); with one, ANGLE on EGL.
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser, type CDPSession } from 'puppeteer-core';
import { withoutJemalloc } from '../shared/allocator.ts';
import type { Logger } from '../shared/log.ts';

export type GpuMode = 'auto' | 'on' | 'off';

const SYSTEM_CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];

export interface ResolvedBrowser { executablePath: string; origin: 'config' | 'system' | 'bundled' }

export async function resolveChromium(configured: string | null): Promise<ResolvedBrowser> {
  if (configured) {
    if (!existsSync(configured)) throw new Error(`CHROMIUM_PATH ${configured} does not exist`);
    return { executablePath: configured, origin: 'config' };
  }
  const system = SYSTEM_CHROMIUM.find((candidate) => existsSync(candidate));
  if (system) return { executablePath: system, origin: 'system' };
  const { default: bundled } = await import('@sparticuz/chromium');
  return { executablePath: await bundled.executablePath(), origin: 'bundled' };
}

/**
 * The rule of gpu 'auto': a GPU is assumed when the host exposes an NVIDIA device or a DRM render
 * node (/dev/dri/renderD*), as a container does when it is given a GPU.
 */
function gpuPresent(): boolean {
  if (existsSync('/dev/nvidia0')) return true;
  try {
    return readdirSync('/dev/dri').some((name) => name.startsWith('renderD'));
  } catch {
    return false;
  }
}

/** Whether a mode means the GPU on this host. */
export function wantsGpu(mode: GpuMode): boolean {
  return mode === 'on' || (mode === 'auto' && gpuPresent());
}

export function chromiumArgs(gpu: boolean): string[] {
  const common = [
    '--headless=new',
    '--no-sandbox',
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-extensions',
    '--disable-default-apps',
    '--disable-breakpad',
    '--disable-domain-reliability',
    '--disable-features=Translate,MediaRouter,OptimizationHints',
    '--disable-dev-shm-usage',
    '--disable-quic',
    '--mute-audio',
    '--hide-scrollbars',
    '--ignore-gpu-blocklist',
    '--enable-webgl',
    '--disable-renderer-backgrounding',
    '--disable-background-timer-throttling',
    '--disable-backgrounding-occluded-windows',
  ];
  return gpu
    ? [...common, '--enable-gpu', '--use-gl=angle', '--use-angle=gl-egl', '--enable-gpu-rasterization']
    // Not --in-process-gpu: a few per cent faster here, but Chromium then crashed now and then at
    // start (general protection faults in its thread pool).
    : [...common, '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-gpu-compositing'];
}

export interface LaunchedBrowser {
  browser: Browser; wsEndpoint: string; gpu: boolean; resolved: ResolvedBrowser;
  /**
   * Whether the browser answers a round trip within 2 s. Right after the process dies its
   * connection can still look up, so this asks rather than trusting `connected`.
   */
  alive(): Promise<boolean>;
  /** Closes a page by its DevTools target id (one whose own connection is gone); never throws. */
  closeTarget(targetId: string): Promise<void>;
  close(): Promise<void>;
}

/** Tries this many times before a launch failure counts: a start can die on the way under load. */
const LAUNCH_ATTEMPTS = 3;

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((candidate) => existsSync(candidate)) ?? null;

/**
 * The command that runs Chromium so that it cannot outlive this process, whatever kills it
 * (SIGKILL, the OOM killer, a crash): util-linux's setpriv sets a parent-death signal (SIGKILL)
 * and execs Chromium, which keeps that setting and its pid. When the browser process dies, its
 * zygotes, GPU, network and renderer processes exit within a second (they lose their IPC
 * channel). The kernel sends the signal when the *thread* that spawned Chromium ends, so the
 * farm launches from the main thread (docs/renderer.md, "Lifecycle").
 */
function boundCommand(executablePath: string, args: string[]): { executablePath: string; args: string[]; bound: boolean } {
  if (!SETPRIV) return { executablePath, args, bound: false };
  return { executablePath: SETPRIV, args: ['--pdeathsig', 'KILL', '--', executablePath, ...args], bound: true };
}

let warnedUnbound = false;

/** Runs `launch` with a signal that follows `stop` only while it runs (puppeteer kills the browser whenever its signal aborts). */
async function untilStopped<T>(stop: AbortSignal | undefined, launch: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const launching = new AbortController();
  const follow = () => launching.abort(stop!.reason);
  stop?.addEventListener('abort', follow, { once: true });
  try {
    return await launch(launching.signal);
  } finally {
    stop?.removeEventListener('abort', follow);
  }
}

async function startChromium(executablePath: string, gpu: boolean, log: Logger, stop?: AbortSignal): Promise<{ browser: Browser; userDataDir: string }> {
  for (let attempt = 1; ; attempt += 1) {
    stop?.throwIfAborted();
    const userDataDir = await mkdtemp(path.join(os.tmpdir(), 'skinfarm-chromium-'));
    const command = boundCommand(executablePath, [...chromiumArgs(gpu), `--user-data-dir=${userDataDir}`, '--remote-debugging-port=0', 'about:blank']);
    if (!command.bound && !warnedUnbound) {
      warnedUnbound = true;
      log.warn('setpriv (util-linux) not found: Chromium may outlive this process if it is killed');
    }
    try {
      const browser = await untilStopped(stop, (signal) => puppeteer.launch({
        executablePath: command.executablePath,
        ignoreDefaultArgs: true,
        args: command.args,
        defaultViewport: null,
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
        protocolTimeout: 30_000,
        // Chromium has its own allocator: not the jemalloc the API process may run on.
        env: withoutJemalloc(process.env),
        signal,
      }));
      return { browser, userDataDir };
    } catch (error) {
      await rm(userDataDir, { recursive: true, force: true });
      stop?.throwIfAborted();
      if (attempt >= LAUNCH_ATTEMPTS) throw error;
      log.warn('chromium did not start; trying again', { attempt, err: (error as Error).message.split('\n')[0] });
    }
  }
}

/** Starts a browser; `stop` aborting while it starts kills it and rejects with the abort reason. */
export async function launchBrowser(configured: string | null, mode: GpuMode, log: Logger, stop?: AbortSignal): Promise<LaunchedBrowser> {
  const resolved = await resolveChromium(configured);
  const gpu = wantsGpu(mode);
  const { browser, userDataDir } = await startChromium(resolved.executablePath, gpu, log, stop);
  const close = async () => {
    await browser.close().catch(() => browser.process()?.kill('SIGKILL'));
    await rm(userDataDir, { recursive: true, force: true });
  };
  let probe: CDPSession;
  try {
    log.info('chromium started', { executable: resolved.executablePath, origin: resolved.origin, version: await browser.version(), gpu, pid: browser.process()?.pid });
    // A session of its own for liveness probes: Browser.version() answers from a cache.
    probe = await browser.target().createCDPSession();
  } catch (error) {
    await close();
    throw error;
  }
  return {
    browser,
    wsEndpoint: browser.wsEndpoint(),
    gpu,
    resolved,
    async alive() {
      if (!browser.connected || browser.process()?.exitCode != null || browser.process()?.signalCode) return false;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), 2000); });
      const answer = probe.send('Browser.getVersion').then(() => true, () => false);
      return Promise.race([answer, late]).finally(() => clearTimeout(timer));
    },
    async closeTarget(targetId) {
      await probe.send('Target.closeTarget', { targetId }).catch(() => {});
    },
    close,
  };
}
