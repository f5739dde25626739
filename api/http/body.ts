// Request bodies, read within bounds: a Content-Length over the route's limit is refused before
// anything is read, each client may be sending only a few bodies at once, all bodies being read
// hold at most so many bytes together, and a body must arrive in full by a deadline. Twenty
// sockets trickling 4 MiB forms once held 128 MB for five minutes and got no answer.
import type { Context } from 'koa';
import { ApiError, type Localized } from '../../shared/errors.ts';
import { clientKey } from './rate-limit.ts';

export interface BodyLimits {
  /** How long a body may take to arrive, from the first read. */
  timeoutMs: number;
  /** Bodies one client (an address, an IPv6 /64) may be sending at once. */
  perClient: number;
  /** Bytes all bodies being read may hold together (each counted at its Content-Length, or its limit when chunked). */
  bytesInFlight: number;
}

/** Bodies being read: per client, and their bytes. One per process, as its memory is. */
class BodyGate {
  private readonly clients = new Map<string, number>();
  private bytes = 0;
  limits: BodyLimits | null = null;

  async read<T>(ctx: Context, maxBytes: number, what: Localized, read: () => Promise<T>): Promise<T> {
    const limits = this.limits;
    if (!limits) throw new Error('a request body is read before limitBodies()');
    const declared = ctx.request.length;
    if (declared !== undefined && declared > maxBytes) throw tooLarge(what, maxBytes);
    // Without a length a body is chunked (or absent): it may grow to the limit.
    const bytes = declared ?? (ctx.get('Transfer-Encoding') ? maxBytes : 0);
    const client = clientKey(ctx.ip);
    const sending = this.clients.get(client) ?? 0;
    if (sending >= limits.perClient) {
      throw new ApiError('rate_limited', { detail: { zh: `同一地址最多同时上传 ${limits.perClient} 个请求体`, en: `at most ${limits.perClient} request bodies at once from one address` }, retryAfter: 1 });
    }
    if (this.bytes + bytes > limits.bytesInFlight) throw new ApiError('overloaded', { detail: { zh: '正在接收的请求体过多', en: 'too many request bodies are arriving' }, retryAfter: 1 });
    this.clients.set(client, sending + 1);
    this.bytes += bytes;
    let timer: NodeJS.Timeout | undefined;
    const reading = read();
    try {
      return await Promise.race([reading, new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ApiError('request_timeout', { detail: { zh: `请求体须在 ${limits.timeoutMs / 1000} 秒内发送完毕`, en: `the body must arrive within ${limits.timeoutMs / 1000} s` } })), limits.timeoutMs);
      })]);
    } finally {
      clearTimeout(timer);
      // Past the deadline the reader is abandoned: it fails when the reply closes the connection.
      reading.catch(() => {});
      this.bytes -= bytes;
      const left = this.clients.get(client)! - 1;
      if (left === 0) this.clients.delete(client);
      else this.clients.set(client, left);
    }
  }
}

const gate = new BodyGate();

/** Called once at start (api/server.ts) with the configured limits; no body is read before. */
export function limitBodies(limits: BodyLimits): void {
  gate.limits = limits;
}

function tooLarge(what: Localized, maxBytes: number): ApiError {
  return new ApiError('payload_too_large', { detail: { zh: `${what.zh}最多 ${maxBytes} 字节`, en: `${what.en} is at most ${maxBytes} bytes` } });
}

/** Runs `read` (which consumes ctx's body, at most `maxBytes` of it) within the limits of every body. */
export function boundedBody<T>(ctx: Context, maxBytes: number, what: Localized, read: () => Promise<T>): Promise<T> {
  return gate.read(ctx, maxBytes, what, read);
}

/** The whole body, at most `maxBytes` (a longer one is 413 as soon as it is longer). */
export function readBody(ctx: Context, maxBytes: number, what: Localized): Promise<Buffer> {
  return boundedBody(ctx, maxBytes, what, async () => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw tooLarge(what, maxBytes);
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  });
}

/** Reads a small JSON request body with a size cap; malformed JSON is the client's error. */
export async function readJson(ctx: Context, maxBytes = 256 * 1024): Promise<unknown> {
  const text = (await readBody(ctx, maxBytes, { zh: 'JSON 请求体', en: 'a JSON body' })).toString('utf8').trim();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError('bad_request', { detail: { zh: '请求体不是有效的 JSON', en: 'the body is not valid JSON' } });
  }
}

/** A query parameter ("" and absent both mean not given; a repeated one was refused by errorHandler). */
export function queryParam(ctx: Context, name: string): string | undefined {
  const raw = ctx.query[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return value === undefined || value === '' ? undefined : value;
}
