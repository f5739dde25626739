// The real service for a test, as a user runs it (scripts/launch.ts starts it): loopback, free
// ports, debug logs, no Chromium unless a test asks; plus call(), which checks every answer
// against the OpenAPI document.
import { launch, ON_FREE_PORTS, type LaunchOptions, type RunningService } from '../../scripts/launch.ts';
import { checkAnswer } from './openapi-validator.ts';

export { ROOT } from '../../scripts/launch.ts';
export type RunningApp = RunningService;
export type StartOptions = Pick<LaunchOptions, 'timeoutMs' | 'onLog' | 'keepIndexing' | 'prefix'>;

export function startApp(env: Record<string, string>, options: StartOptions = {}): Promise<RunningApp> {
  return launch({
    ...ON_FREE_PORTS,
    LOG_LEVEL: 'debug',
    // Chromium only for the tests that render; they set RENDER_WORKERS themselves.
    RENDER_WORKERS: '0',
    SESSION_SECRET: 'test-session-secret-0123456789',
    ...env,
  }, {
    // Render pages warm up before the service answers; one stuck page is retried (renderer/farm.ts),
    // which must fit in the wait.
    ...(env.RENDER_WORKERS && env.RENDER_WORKERS !== '0' ? { timeoutMs: 120_000 } : {}),
    ...options,
  });
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
