// A multipart form with a few named files, at most one each, read into memory. Whatever is wrong
// with the form is the client's error: too large is 413, anything else malformed (an unknown or
// repeated file field, too many files or fields, a truncated body, no boundary) is 400, never a
// 500; and the error names the field it is about. The form is read within the bounds of every
// request body (body.ts): a declared length over what the form can hold is 413 before reading.
import multer from '@koa/multer';
import type { Context, Middleware } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { boundedBody } from './body.ts';

/** Multer's limit codes that mean "too large" rather than "malformed". */
const TOO_LARGE = new Set(['LIMIT_FILE_SIZE', 'LIMIT_FIELD_VALUE', 'LIMIT_FIELD_KEY']);

export interface FileFormLimits { fileSize: number; fields: number; fieldSize: number }

/** A part's boundary and headers: generous, a browser writes ~150 bytes. */
const PART_OVERHEAD = 1024;

/** The longest body a form of `files` can be: each file and field at its limit, and the parts around them. */
function formBytes(files: readonly string[], limits: FileFormLimits): number {
  return files.length * limits.fileSize + limits.fields * limits.fieldSize + (files.length + limits.fields + 1) * PART_OVERHEAD;
}

/** What went wrong, in words, naming the field (multer's error carries it where it knows one). */
function describe(code: string, field: string | undefined, files: readonly string[], limits: FileFormLimits): string {
  const takers = `only the field${files.length > 1 ? 's' : ''} ${files.join(' and ')} take${files.length > 1 ? '' : 's'} files`;
  switch (code) {
    case 'LIMIT_UNEXPECTED_FILE':
      if (field !== undefined && files.includes(field)) return `${field}: one file at most`;
      return field ? `${field} takes no file: ${takers}` : takers;
    case 'LIMIT_FILE_COUNT': return `too many files: ${takers}`;
    case 'LIMIT_FILE_SIZE': return `${field ?? 'a file'} is larger than ${limits.fileSize} bytes`;
    case 'LIMIT_FIELD_VALUE': return `${field ?? 'a field'} is longer than ${limits.fieldSize} bytes`;
    case 'LIMIT_FIELD_KEY': return 'a field name is too long';
    case 'LIMIT_FIELD_COUNT': case 'LIMIT_PART_COUNT': return `too many fields (at most ${limits.fields})`;
    default: return field ? `${field}: ${code.toLowerCase()}` : code.toLowerCase();
  }
}

export function toMultipartError(error: unknown, files: readonly string[], limits: FileFormLimits): ApiError {
  if (error instanceof ApiError) return error;
  const { code, field } = (error ?? {}) as { code?: unknown; field?: unknown };
  const name = typeof field === 'string' ? field : undefined;
  if (typeof code !== 'string') return new ApiError('bad_request', { detail: 'multipart/form-data: malformed body', cause: error });
  const detail = `multipart/form-data: ${describe(code, name, files, limits)}`;
  return new ApiError(TOO_LARGE.has(code) ? 'payload_too_large' : 'bad_request', { detail, cause: error });
}

/** Parses the form (at most one file in each of `files`) into ctx.files, then runs the route; form errors never reach the route. */
export function fileForm(files: readonly string[], limits: FileFormLimits): Middleware {
  // One file more than the form takes gets as far as multer's field check, which names it (a
  // second cape, an unknown field); busboy stops any further one without a name.
  const upload = multer({ storage: multer.memoryStorage(), limits: { ...limits, files: files.length + 1 } }).fields(files.map((name) => ({ name, maxCount: 1 })));
  const maxBytes = formBytes(files, limits);
  return async (ctx, next) => {
    try {
      await boundedBody(ctx, maxBytes, { zh: '表单', en: 'the form' }, () => upload(ctx as never, async () => {}));
    } catch (error) {
      throw toMultipartError(error, files, limits);
    }
    await next();
  };
}

/** The file sent in `field`, if any (after fileForm). */
export function formFile(ctx: Context, field: string): { buffer: Buffer; size: number } | undefined {
  const files = (ctx as Context & { files?: Record<string, Array<{ buffer: Buffer; size: number }>> }).files;
  return files?.[field]?.[0];
}
