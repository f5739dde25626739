// The got instance every upstream call goes through: timeout, a short retry for idempotent calls,
// no redirects, and one mapping from transport outcomes to the spec's upstream errors.
import got, { type Got, type Method, type Headers, type Progress, type Response } from 'got';
import type { LookupFunction } from 'node:net';
import type { RedisClientType } from '@redis/client';
import type { Logger } from '../../../shared/log.ts';
import { ApiError } from '../../../shared/errors.ts';
import { upstreamCalls, upstreamDuration } from '../../metrics.ts';
import type { UpstreamBudgets } from './budget.ts';
import { Circuit, type FaultCode, type FaultPolicy } from './circuit.ts';
import type { SourceHealth } from './health.ts';

export interface UpstreamResponse<T> { status: number; body: T; headers: Record<string, string | string[] | undefined> }

export interface UpstreamRequest {
  method?: Method;
  json?: unknown;
  form?: Record<string, string>;
  headers?: Headers;
  searchParams?: Record<string, string>;
  /** Statuses that are answers (e.g. 204/404 "not found"), not failures. */
  expect?: number[];
  /** The budget this call is taken from (e.g. "official.names"); none = unlimited. */
  family?: string;
  /** Resolves the host instead of the system's lookup (public-lookup.ts: public addresses only). */
  dnsLookup?: LookupFunction;
}

export interface UpstreamClientOptions {
  timeoutMs: number;
  retries: number;
  userAgent: string;
  budgets?: UpstreamBudgets;
  /** Statuses meaning "slow down": they trip the circuit (Mojang's CDN answers 403). */
  throttleStatuses?: number[];
  /** Where the circuit is shared with the other instances (REDIS_URL); none = this process only. */
  shared?: { redis: RedisClientType; log: Logger };
  /** Opening the circuit on repeated timeouts, failed connections and 5xx; none = on throttling only. */
  faults?: FaultPolicy;
  /** Where the circuit's changes are logged. */
  log?: Logger;
}

export class UpstreamClient {
  readonly health: SourceHealth;
  readonly circuit: Circuit;
  private readonly got: Got;
  private readonly budgets: UpstreamBudgets | null;
  private readonly throttleStatuses: number[];

  constructor(health: SourceHealth, options: UpstreamClientOptions) {
    this.health = health;
    this.budgets = options.budgets ?? null;
    this.throttleStatuses = options.throttleStatuses ?? [429];
    this.circuit = new Circuit(health.id, {
      shared: options.shared ? { ...options.shared, key: `skinfarm:circuit:${health.id}` } : null,
      faults: options.faults,
      log: options.log,
    });
    health.attachCircuit(this.circuit);
    this.got = got.extend({
      timeout: { request: options.timeoutMs },
      retry: {
        limit: options.retries,
        methods: ['GET'],
        statusCodes: [502, 503, 504],
        errorCodes: ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'EAI_AGAIN'],
        calculateDelay: ({ computedValue }) => (computedValue === 0 ? 0 : 150),
      },
      followRedirect: false,
      throwHttpErrors: false,
      headers: { 'user-agent': options.userAgent, accept: 'application/json' },
    });
  }

  /** JSON (or empty) answer; statuses outside 2xx and `expect` are upstream errors. */
  async json<T>(url: string, request: UpstreamRequest = {}): Promise<UpstreamResponse<T | undefined>> {
    const response = await this.send(url, request, 'text');
    const text = response.body as string;
    if (!text.trim()) return { ...response, body: undefined };
    try {
      return { ...response, body: JSON.parse(text) as T };
    } catch {
      this.health.failed(`malformed JSON from ${new URL(url).pathname}`);
      throw new ApiError('upstream_error', { detail: { zh: `${this.health.id}: 无法解析上游响应`, en: `${this.health.id}: the answer could not be parsed` } });
    }
  }

  /** Marks the latest call's answer as unusable (the caller found its shape wrong). */
  malformed(what: string): ApiError {
    this.health.failed(`malformed answer: ${what}`);
    return new ApiError('upstream_error', { detail: { zh: `${this.health.id}: 上游响应格式错误`, en: `${this.health.id}: the answer has the wrong shape` } });
  }

  /** A binary download, cancelled as soon as it grows past `maxBytes`; `expect`: statuses answered, not thrown. */
  async download(url: string, maxBytes: number, dnsLookup?: LookupFunction, expect?: number[]): Promise<UpstreamResponse<Buffer>> {
    return this.send(url, { headers: { accept: 'image/png' }, dnsLookup, expect }, 'buffer', maxBytes) as Promise<UpstreamResponse<Buffer>>;
  }

  async send(url: string, request: UpstreamRequest, responseType: 'text' | 'buffer', maxBytes = Infinity): Promise<UpstreamResponse<string | Buffer>> {
    try {
      await this.admit(request.family);
    } catch (error) {
      upstreamCalls.inc({ source: this.health.id, outcome: 'refused' });
      throw error;
    }
    const started = performance.now();
    const outcome = (name: string) => {
      upstreamCalls.inc({ source: this.health.id, outcome: name });
      upstreamDuration.observe({ source: this.health.id }, (performance.now() - started) / 1000);
    };
    const abort = new AbortController();
    let tooLarge = false;
    let response: Response<string | Uint8Array>;
    try {
      const pending = this.got(url, {
        method: request.method ?? 'GET',
        json: request.json,
        form: request.form,
        headers: request.headers,
        searchParams: request.searchParams,
        dnsLookup: request.dnsLookup,
        responseType,
        signal: abort.signal,
      }) as Promise<Response<string | Uint8Array>> & { on: (event: 'downloadProgress', fn: (p: Progress) => void) => unknown };
      if (Number.isFinite(maxBytes)) {
        pending.on('downloadProgress', (progress) => {
          if (progress.transferred > maxBytes || (progress.total ?? 0) > maxBytes) {
            tooLarge = true;
            abort.abort();
          }
        });
      }
      response = await pending;
    } catch (error) {
      outcome((error as { code?: string }).code === 'ETIMEDOUT' ? 'timeout' : 'error');
      if (tooLarge) {
        this.circuit.answered();
        this.health.failed('response too large');
        throw new ApiError('upstream_error', { detail: { zh: `${this.health.id}: 响应过大`, en: `${this.health.id}: the answer is too large` }, cause: error });
      }
      const code = (error as { code?: string }).code;
      if (code === 'ETIMEDOUT') {
        this.fault('upstream_timeout', 'timeout');
        throw new ApiError('upstream_timeout', { detail: this.health.id, cause: error });
      }
      this.fault('upstream_error', code ?? (error as Error).message);
      throw new ApiError('upstream_error', { detail: { zh: `${this.health.id}: 连接失败`, en: `${this.health.id}: the connection failed` }, cause: error });
    }
    const status = response.statusCode;
    outcome(status < 500 && status !== 429 ? 'ok' : 'error');
    if ((status >= 200 && status < 300) || request.expect?.includes(status)) {
      this.health.succeeded(performance.now() - started);
      this.circuit.answered();
      const body = typeof response.body === 'string' ? response.body : Buffer.from(response.body.buffer, response.body.byteOffset, response.body.byteLength);
      return { status, body, headers: response.headers };
    }
    if (this.throttleStatuses.includes(status)) {
      this.health.failed(`HTTP ${status}`);
      const seconds = await this.circuit.trip(Number(response.headers['retry-after']) || undefined);
      throw new ApiError('upstream_busy', { detail: `${this.health.id}: HTTP ${status}`, retryAfter: seconds });
    }
    if (status >= 500) {
      this.fault('upstream_error', `HTTP ${status}`);
    } else {
      // A 4xx is an answer the caller did not expect, not a sign the upstream is down.
      this.health.failed(`HTTP ${status}`);
      this.circuit.answered();
    }
    throw new ApiError('upstream_error', { detail: `${this.health.id}: HTTP ${status}` });
  }

  /** A timeout, failed connection or 5xx: the source's health and its circuit both count it. */
  private fault(code: FaultCode, reason: string): void {
    this.health.failed(reason);
    this.circuit.failed(code);
  }

  /** Refuses the call without sending it while the circuit is open or the budget is spent. */
  private async admit(family: string | undefined): Promise<void> {
    await this.circuit.enter();
    if (!family || !this.budgets) return;
    const taken = await this.budgets.take(family);
    if (!taken.ok) {
      this.circuit.cancel();
      this.health.throttled();
      throw new ApiError('upstream_busy', { detail: `${family}: budget spent`, retryAfter: taken.retryAfterMs / 1000 });
    }
  }
}
