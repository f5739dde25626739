// A body made once and served many times (the API viewer's files, /openapi.json): its ETag and
// its gzip form are made with it (the gzip off the event loop), so a request costs a lookup, a
// 304 or a write of bytes already made, never a serialisation or a compression.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Context } from 'koa';
import { etagMatches } from '../http/etag.ts';

export interface Prebuilt { body: Buffer; etag: string; type: string; gzipped: Promise<Buffer> }

const compress = promisify(gzip);

export function prebuilt(body: Buffer, type: string): Prebuilt {
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`, gzipped: compress(body, { level: 9 }) };
}

/** Answers `file`: 304 when the client holds this version, gzip when it accepts it. */
export async function sendPrebuilt(ctx: Context, file: Prebuilt): Promise<void> {
  ctx.set('ETag', file.etag);
  ctx.vary('Accept-Encoding');
  if (etagMatches(ctx.get('If-None-Match'), file.etag)) {
    ctx.status = 304;
    return;
  }
  ctx.type = file.type;
  if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = await file.gzipped;
  } else {
    ctx.body = file.body;
  }
}
