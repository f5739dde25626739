// Finding and starting the headless Chromium the render pages live in: the configured path, else
// a system Chromium, else the one shipped inside @sparticuz/chromium (works with no apt at all).
// Without a GPU WebGL runs on SwiftShader (ANGLE's software Vulkan); with one, ANGLE on EGL.
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
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
  close(): Promise<void>;
}

/** Tries this many times before a launch failure counts: a start can die on the way under load. */
const LAUNCH_ATTEMPTS = 3;

async function startChromium(executablePath: string, gpu: boolean, log: Logger): Promise<{ browser: Browser; userDataDir: string }> {
  for (let attempt = 1; ; attempt += 1) {
    const userDataDir = await mkdtemp(path.join(os.tmpdir(), 'skinfarm-chromium-'));
    try {
      const browser = await puppeteer.launch({
        executablePath,
        ignoreDefaultArgs: true,
        args: [...chromiumArgs(gpu), `--user-data-dir=${userDataDir}`, '--remote-debugging-port=0', 'about:blank'],
        defaultViewport: null,
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
        protocolTimeout: 30_000,
      });
      return { browser, userDataDir };
    } catch (error) {
      await rm(userDataDir, { recursive: true, force: true });
      if (attempt >= LAUNCH_ATTEMPTS) throw error;
      log.warn('chromium did not start; trying again', { attempt, err: (error as Error).message.split('\n')[0] });
    }
  }
}

export async function launchBrowser(configured: string | null, mode: GpuMode, log: Logger): Promise<LaunchedBrowser> {
  const resolved = await resolveChromium(configured);
  const gpu = wantsGpu(mode);
  const { browser, userDataDir } = await startChromium(resolved.executablePath, gpu, log);
  log.info('chromium started', { executable: resolved.executablePath, origin: resolved.origin, version: await browser.version(), gpu });
  // A session of its own for liveness probes: Browser.version() answers from a cache.
  const probe = await browser.target().createCDPSession();
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
    async close() {
      await browser.close().catch(() => browser.process()?.kill('SIGKILL'));
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}
