// Starts the real service as a user would (`node api/main.ts` with environment variables) on
// free ports, captures its log lines, and stops it with SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { checkAnswer } from './openapi-validator.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface RunningApp {
  urls: Record<'skins' | 'media' | 'search', string>;
  logs: Array<Record<string, unknown>>;
  rawLog: string[];
  process: ChildProcess;
  /** Resolves with the first log entry matching, waiting for lines still in the pipe. */
  waitForLog(match: (entry: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(): Promise<number | null>;
}

export interface StartOptions {
  timeoutMs?: number;
  /** Sees every log line as it comes, with the process (e.g. to signal it before it is ready). */
  onLog?: (entry: Record<string, unknown>, child: ChildProcess) => void;
  /** Return as soon as the services are ready, while media may still be indexing. */
  keepIndexing?: boolean;
  /** A command the service runs under, e.g. setpriv with fewer capabilities: [command, ...args]. */
  prefix?: string[];
}

export async function startApp(env: Record<string, string>, options: StartOptions = {}): Promise<RunningApp> {
  const [command, ...args] = [...options.prefix ?? [], process.execPath, path.join(ROOT, 'api/main.ts')];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      HOST: '127.0.0.1',
      SKINS_PORT: '0',
      MEDIA_PORT: '0',
      SEARCH_PORT: '0',
      LOG_LEVEL: 'debug',
      // Chromium only for the tests that render; they set RENDER_WORKERS themselves.
      RENDER_WORKERS: '0',
      SESSION_SECRET: 'test-session-secret-0123456789',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  const rawLog: string[] = [];
  const urls = {} as RunningApp['urls'];
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start in time:\n${rawLog.join('\n')}`)), options.timeoutMs ?? 60_000);
    const onLine = (line: string) => {
      rawLog.push(line);
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      logs.push(entry);
      options.onLog?.(entry, child);
      if (entry.msg === 'listening' && typeof entry.service === 'string') {
        urls[entry.service as keyof RunningApp['urls']] = `http://127.0.0.1:${entry.port}`;
      }
      if (entry.msg === 'ready') {
        clearTimeout(timer);
        resolve();
      }
    };
    readline.createInterface({ input: child.stdout! }).on('line', onLine);
    readline.createInterface({ input: child.stderr! }).on('line', (line) => rawLog.push(line));
    // 'close', not 'exit': the last lines may still be in the pipe when the process has exited.
    child.once('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before it was ready:\n${rawLog.join('\n')}`));
    });
  });
  await ready;
  const app: RunningApp = {
    urls,
    logs,
    rawLog,
    process: child,
    waitForLog(match, timeoutMs = 5000) {
      const found = logs.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => { off(); reject(new Error('log line not seen')); }, timeoutMs);
        const onLine = () => {
          const hit = logs.find(match);
          if (hit) { off(); resolve(hit); }
        };
        // readline parses on the same 'data' events; check after it has run.
        const onData = () => setImmediate(onLine);
        const off = () => { clearTimeout(timer); child.stdout!.off('data', onData); };
        child.stdout!.on('data', onData);
      });
    },
    async stop() {
      // Already ended (also by a signal: then 'exit' has been emitted and would never come again).
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      return code as number | null;
    },
  };
  // Media opens its port while it indexes (503 until a category is read): a test starts once the
  // library is indexed, as an operator's first request usually does. Tests of that window wait themselves.
  const services = (env.SERVICES ?? 'skins,media,search').split(',');
  if (services.includes('media') && !options.keepIndexing) await app.waitForLog((line) => line.msg === 'media library indexed', options.timeoutMs ?? 60_000);
  return app;
}

export interface CallOptions {
  /**
   * Why this answer is not checked against the OpenAPI document: a request the document does not
   * cover on purpose (a deliberately malformed one, a test-only route). Use sparingly.
   */
  undocumented?: string;
}

/**
 * fetch() returning status, headers and parsed JSON (or the raw bytes). Answers of our services are
 * checked against the OpenAPI document; a mismatch fails the calling test.
 */
export async function call(url: string, init?: RequestInit, options: CallOptions = {}) {
  // A pooled keep-alive socket may belong to a service that a test just stopped (a new one can
  // get the same port); an idempotent request is simply sent again, each failure dropping a dead
  // socket from the pool (one retry was once not enough: "fetch failed" twice after a restart).
  const idempotent = ['GET', 'HEAD'].includes((init?.method ?? 'GET').toUpperCase());
  let response: Response | undefined;
  for (let attempt = 1; !response; attempt += 1) {
    try {
      response = await fetch(url, init);
    } catch (error) {
      if (!idempotent || attempt === 3) throw error;
    }
  }
  const bytes = Buffer.from(await response.arrayBuffer());
  const type = response.headers.get('content-type') ?? '';
  const json = type.includes('json') && bytes.length ? JSON.parse(bytes.toString('utf8')) : undefined;
  const answer = { status: response.status, headers: response.headers, json, bytes, text: bytes.toString('utf8') };
  if (!options.undocumented) await checkAnswer(url, init?.method ?? 'GET', answer);
  return answer;
}
