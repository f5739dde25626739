// A multipart form with at most one file, read into memory. Whatever is wrong with the form is
// the client's error: too large is 413, anything else malformed (a wrong or second file field,
// too many fields, a truncated body, no boundary) is 400, never a 500.
import multer from '@koa/multer';
import type { Middleware } from 'koa';
import { ApiError } from '../../shared/errors.ts';

/** Multer's limit codes that mean "too large" rather than "malformed". */
const TOO_LARGE = new Set(['LIMIT_FILE_SIZE', 'LIMIT_FIELD_VALUE', 'LIMIT_FIELD_KEY']);

export interface SingleFileLimits { fileSize: number; fields: number; fieldSize: number }

export function toMultipartError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && TOO_LARGE.has(code)) return new ApiError('payload_too_large', { detail: code.slice(6).toLowerCase().replace('_', ' '), cause: error });
  return new ApiError('bad_request', { detail: `multipart/form-data: ${typeof code === 'string' ? code.toLowerCase() : 'malformed body'}`, cause: error });
}

/** Parses the form (one file in `field`), then runs the route; form errors never reach the route. */
export function singleFileForm(field: string, limits: SingleFileLimits): Middleware {
  const upload = multer({ storage: multer.memoryStorage(), limits: { ...limits, files: 1 } }).single(field);
  return async (ctx, next) => {
    try {
      await upload(ctx as never, async () => {});
    } catch (error) {
      throw toMultipartError(error);
    }
    await next();
  };
}
