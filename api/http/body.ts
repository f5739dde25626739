// Reads a small JSON request body with a size cap; malformed JSON is the client's error.
import type { Context } from 'koa';
import { ApiError } from '../../shared/errors.ts';

export async function readJson(ctx: Context, maxBytes = 256 * 1024): Promise<unknown> {
  const declared = Number(ctx.get('Content-Length') || 0);
  if (declared > maxBytes) throw new ApiError('payload_too_large', { detail: { zh: `JSON 请求体最多 ${maxBytes} 字节`, en: `a JSON body is at most ${maxBytes} bytes` } });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new ApiError('payload_too_large', { detail: { zh: `JSON 请求体最多 ${maxBytes} 字节`, en: `a JSON body is at most ${maxBytes} bytes` } });
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
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
