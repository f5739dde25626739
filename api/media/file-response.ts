// One place that answers with a media file's bytes, or a variant's made from them (variants.ts):
// cache policy, ETag and 304, single byte ranges (206/416), HEAD without opening a stream. The
// file is opened without following a symlink and must still match the index (size and mtime);
// otherwise the caller hears 'stale'.
// A file that is there but cannot be opened (EACCES, EIO...) is handed back as the error.
import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import type { Context } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { localizedErrorEnvelope } from '../http/envelope.ts';
import { readFailure } from './fs-errors.ts';
import type { MediaFile } from './types.ts';

/** no-store: the random route; public/private: a permanent address (immutable for a year). */
export type CachePolicy = 'no-store' | 'public' | 'private';

export type SendResult = 'sent' | 'stale' | { failed: NodeJS.ErrnoException };
/** Why nothing was sent: the file changed under the index, or it cannot be read. */
export type Unsent = Exclude<SendResult, 'sent'>;

const YEAR = 31_536_000;

/** A file's tag is its id; a variant's adds its options (variants.ts). */
function etagOf(file: MediaFile): string {
  return `"${file.id}"`;
}

interface ByteRange { start: number; end: number }

/** One `bytes=` range; undefined means "ignore the header" (absent, malformed or several ranges). */
export function parseRange(header: string, size: number): ByteRange | 'unsatisfiable' | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    return suffix === 0 || size === 0 ? 'unsatisfiable' : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size) return 'unsatisfiable';
  return end < start ? undefined : { start, end };
}

function matchesEtag(header: string, etag: string): boolean {
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}

function setCacheHeaders(ctx: Context, file: MediaFile, cache: CachePolicy, ranges: boolean, etag = etagOf(file)): void {
  ctx.set('X-Content-Type-Options', 'nosniff');
  if (ranges) ctx.set('Accept-Ranges', 'bytes');
  if (cache === 'no-store') {
    ctx.set('Cache-Control', 'no-store');
    return;
  }
  ctx.set('Cache-Control', `${cache}, max-age=${YEAR}, immutable`);
  ctx.set('ETag', etag);
  ctx.set('Last-Modified', new Date(file.mtimeMs).toUTCString());
}

export interface SendOptions {
  cache: CachePolicy;
  /** Honour Range: always on a permanent address; on the random route only while picks are sticky. */
  ranges: boolean;
}

/**
 * Answers 304 when If-None-Match holds `etag` on a cacheable answer: an id names one version of
 * one file (and a variant's tag its options too), so a match needs no look at the disk.
 */
export function answeredNotModified(ctx: Context, file: MediaFile, cache: CachePolicy, ranges: boolean, etag = etagOf(file)): boolean {
  const ifNoneMatch = cache !== 'no-store' ? ctx.get('If-None-Match') : '';
  if (!ifNoneMatch || !matchesEtag(ifNoneMatch, etag)) return false;
  setCacheHeaders(ctx, file, cache, ranges, etag);
  ctx.status = 304;
  return true;
}

/**
 * Opens the indexed file without following a symlink; 'stale' when it is gone or no longer the
 * indexed version (size, mtime), the error when it is there but cannot be read.
 */
export async function openIndexed(file: MediaFile, filePath: string | undefined): Promise<fs.FileHandle | Unsent> {
  if (!filePath) return 'stale';
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(filePath, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const failed = readFailure(err);
    return failed ? { failed } : 'stale';
  }
  const stat = await handle.stat().catch(async (err: unknown) => {
    await handle.close();
    throw err;
  });
  if (stat.isFile() && stat.size === file.bytes && Math.floor(stat.mtimeMs) === file.mtimeMs) return handle;
  await handle.close();
  return 'stale';
}

export const isOpen = (opened: fs.FileHandle | Unsent): opened is fs.FileHandle => typeof opened !== 'string' && !('failed' in opened);

/** A variant's bytes (made from the file) under the file's cache policy and the variant's own tag. */
export function sendBytes(ctx: Context, file: MediaFile, cache: CachePolicy, body: { bytes: Buffer; mime: string; etag: string }): void {
  setCacheHeaders(ctx, file, cache, false, body.etag);
  ctx.status = 200;
  ctx.type = body.mime;
  ctx.body = body.bytes;
}

export async function sendMediaFile(ctx: Context, file: MediaFile, filePath: string | undefined, { cache, ranges }: SendOptions): Promise<SendResult> {
  const etag = etagOf(file);
  if (answeredNotModified(ctx, file, cache, ranges)) return 'sent';
  const handle = await openIndexed(file, filePath);
  // Stale or unreadable: no header is set yet, so the caller's error answer carries no long-lived caching.
  if (!isOpen(handle)) return handle;
  let streaming = false;
  try {
    setCacheHeaders(ctx, file, cache, ranges);
    const rangeHeader = ranges ? ctx.get('Range') : '';
    const ifRange = ctx.get('If-Range');
    let range = rangeHeader && (!ifRange || ifRange === etag) ? parseRange(rangeHeader, file.bytes) : undefined;
    if (range === 'unsatisfiable') {
      ctx.status = 416;
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Content-Range', `bytes */${file.bytes}`);
      const asked = rangeHeader.slice(0, 100);
      ctx.body = localizedErrorEnvelope(new ApiError('bad_request', { detail: { zh: `范围 "${asked}" 超出文件（${file.bytes} 字节）`, en: `range "${asked}" is outside the file (${file.bytes} bytes)` } }), ctx);
      return 'sent';
    }
    // A range asked for is answered 206 even when it spans the whole file (bytes=0-), as players expect.
    const partial = range !== undefined;
    range ??= { start: 0, end: file.bytes - 1 };
    ctx.status = partial ? 206 : 200;
    ctx.type = file.format.mime;
    if (partial) ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${file.bytes}`);
    const length = range.end - range.start + 1;
    if (ctx.method === 'HEAD') {
      ctx.set('Content-Length', String(length));
      return 'sent';
    }
    ctx.body = handle.createReadStream({ start: range.start, end: range.end });
    ctx.length = length;
    streaming = true;
    return 'sent';
  } finally {
    // The stream closes the handle itself (autoClose) when it ends or is destroyed.
    if (!streaming) await handle.close();
  }
}
