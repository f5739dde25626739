// Finding and starting the headless Chromium the render pages live in: the configured path, else
// a system Chromium, else the one shipped inside @sparticuz/chromium (works with no apt at all).
// Without a GPU WebGL runs on SwiftShader (ANGLE's software Vulkan); with one, ANGLE on EGL.
// Chromium speaks CDP over a pipe only, held by the relay thread (cdp-relay.ts): it listens on no
// DevTools port, which any local process (of any user) could otherwise connect to and drive.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, CDPSession } from 'puppeteer-core';
import { withoutJemalloc } from '../shared/allocator.ts';
import { bundledChromium } from './bundled-chromium.ts';
import { DEFAULT_GPU_BACKEND, wantsGpu, type GpuBackend, type GpuMode } from './gpu.ts';
import type { Logger } from '../shared/log.ts';
import { relay } from './relay.ts';
import { connectBrowser } from './relay-transport.ts';

const SYSTEM_CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];

export interface ResolvedBrowser { executablePath: string; origin: 'config' | 'system' | 'bundled' }

export async function resolveChromium(configured: string | null): Promise<ResolvedBrowser> {
  if (configured) {
    if (!existsSync(configured)) throw new Error(`CHROMIUM_PATH ${configured} does not exist`);
    return { executablePath: configured, origin: 'config' };
  }
  const system = SYSTEM_CHROMIUM.find((candidate) => existsSync(candidate));
  if (system) return { executablePath: system, origin: 'system' };
  return { executablePath: await bundledChromium(), origin: 'bundled' };
}

export function chromiumArgs(gpu: boolean, backend: GpuBackend = DEFAULT_GPU_BACKEND): string[] {
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
    // Vulkan needs the feature as well as the ANGLE backend: without it the GPU process falls back.
    ? [...common, '--enable-gpu', '--use-gl=angle', `--use-angle=${backend}`, '--enable-gpu-rasterization', ...(backend === 'vulkan' ? ['--enable-features=Vulkan'] : [])]
    // Not --in-process-gpu: a few per cent faster here, but Chromium then crashed now and then at
    // start (general protection faults in its thread pool).
    : [...common, '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-gpu-compositing'];
}

export interface LaunchedBrowser {
  /** This thread's connection (through the relay). */
  browser: Browser;
  /** What another thread connects with (connectBrowser). */
  key: string;
  pid: number; gpu: boolean; resolved: ResolvedBrowser;
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
 * channel). The kernel sends the signal when the *thread* that spawned Chromium ends, so
 * browsers are spawned by the relay thread, which lives as long as the process (docs/renderer.md,
 * "Lifecycle").
 */
function boundCommand(executablePath: string, args: string[]): { executablePath: string; args: string[]; bound: boolean } {
  if (!SETPRIV) return { executablePath, args, bound: false };
  return { executablePath: SETPRIV, args: ['--pdeathsig', 'KILL', '--', executablePath, ...args], bound: true };
}

let warnedUnbound = false;

/** Names browsers in the relay: each try at a launch has its own. */
let lastKey = 0;

/** Starts Chromium in the relay; `stop` aborting kills it and rejects with the abort reason. */
async function startChromium(executablePath: string, gpu: boolean, backend: GpuBackend, log: Logger, stop?: AbortSignal): Promise<{ key: string; pid: number; userDataDir: string }> {
  for (let attempt = 1; ; attempt += 1) {
    stop?.throwIfAborted();
    const userDataDir = await mkdtemp(path.join(os.tmpdir(), 'skinfarm-chromium-'));
    // No startup window: its blank tab was a renderer process (~14 MB PSS) that drew nothing; the
    // browser lives on with no page (while a page is replaced, say) until it is closed.
    const command = boundCommand(executablePath, [...chromiumArgs(gpu, backend), `--user-data-dir=${userDataDir}`, '--remote-debugging-pipe', '--no-startup-window']);
    if (!command.bound && !warnedUnbound) {
      warnedUnbound = true;
      log.warn('setpriv (util-linux) not found: Chromium may outlive this process if it is killed');
    }
    const key = `chromium-${++lastKey}`;
    const kill = () => void relay().request({ op: 'close', browser: key }).catch(() => {});
    stop?.addEventListener('abort', kill, { once: true });
    try {
      // Chromium has its own allocator: not the jemalloc the API process may run on.
      const { pid } = await relay().request({ op: 'launch', browser: key, ...command, env: withoutJemalloc(process.env) });
      return { key, pid: pid!, userDataDir };
    } catch (error) {
      await rm(userDataDir, { recursive: true, force: true });
      stop?.throwIfAborted();
      if (attempt >= LAUNCH_ATTEMPTS) throw error;
      log.warn('chromium did not start; trying again', { attempt, err: (error as Error).message.split('\n')[0] });
    } finally {
      stop?.removeEventListener('abort', kill);
    }
  }
}

/** Starts a browser; `stop` aborting while it starts kills it and rejects with the abort reason. */
export async function launchBrowser(configured: string | null, mode: GpuMode, log: Logger, stop?: AbortSignal, backend: GpuBackend = DEFAULT_GPU_BACKEND): Promise<LaunchedBrowser> {
  const resolved = await resolveChromium(configured);
  const gpu = wantsGpu(mode);
  const { key, pid, userDataDir } = await startChromium(resolved.executablePath, gpu, backend, log, stop);
  const close = async () => {
    // Waits until the process has exited; a relay that ended took its browsers with it.
    await relay().request({ op: 'close', browser: key }).catch(() => {});
    await rm(userDataDir, { recursive: true, force: true });
  };
  let browser: Browser;
  let probe: CDPSession;
  try {
    browser = await connectBrowser(key, (request) => relay().connect(request), 30_000);
    log.info('chromium started', { executable: resolved.executablePath, origin: resolved.origin, version: await browser.version(), gpu, ...(gpu ? { backend } : {}), pid });
    // A session of its own for liveness probes: Browser.version() answers from a cache.
    probe = await browser.target().createCDPSession();
  } catch (error) {
    await close();
    throw error;
  }
  return {
    browser,
    key,
    pid,
    gpu,
    resolved,
    async alive() {
      if (!browser.connected) return false;
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
