// One place that turns any thrown value into an error response. ApiErrors keep their code and
// status; Koa's own client errors are mapped; anything else is a 500 with details only in the log.
import type { Context, Middleware } from 'koa';
import { RenderError, type RenderErrorKind } from '../../renderer/errors.ts';
import { ApiError, isApiError, type ErrorCode } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import { StateLog } from '../../shared/log-state.ts';
import { CORS_HEADERS } from './cors.ts';

/**
 * The service's error body; `ctx` is absent for requests Node refused before Koa saw them. It
 * runs once the success headers are reset, so one written in the reader's language can say
 * which (Content-Language, Vary: api/http/i18n.ts requestLanguage).
 */
export type ErrorFormatter = (error: ApiError, ctx?: Context) => unknown;

/** How long a CDN or browser may keep a 404 (the negative lookup cache time by default). */
export const NOT_FOUND_MAX_AGE = 60;

/** Headers set before an error that still describe the error reply; every other one is dropped. */
const KEPT_ON_ERROR = /^(access-control-|x-request-id$|x-powered-by$|x-ratelimit-|retry-after$)/;

/**
 * Clears what the handler set for a success (ETag, Cache-Control, Content-Disposition...), as
 * Koa's own onerror does, so an outage or a miss is never cached as if it were the image.
 */
function resetHeaders(ctx: Context, error: ApiError): void {
  for (const name of ctx.res.getHeaderNames()) if (!KEPT_ON_ERROR.test(name)) ctx.res.removeHeader(name);
  // A reply may have narrowed what it exposes (images): an error exposes Retry-After and the rest.
  ctx.set(CORS_HEADERS);
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  if (error.retryAfter !== undefined) ctx.set('Retry-After', String(Math.max(1, Math.ceil(error.retryAfter))));
  ctx.set('Cache-Control', error.status === 404 ? `public, max-age=${NOT_FOUND_MAX_AGE}` : 'no-store');
  // A body we stopped reading (too large, malformed) would be read as the next request on this
  // connection, which then hangs: end the connection with the reply instead.
  if (!ctx.req.complete) ctx.set('Connection', 'close');
}

const HTTP_STATUS_CODES: Record<number, ErrorCode> = {
  400: 'bad_request',
  404: 'route_not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'bad_request',
  501: 'not_implemented',
};

/** The render farm's errors at the API edge. */
const RENDER_ERRORS: Record<RenderErrorKind, ErrorCode> = {
  queue_full: 'overloaded',
  closed: 'overloaded',
  timeout: 'render_failed',
  crashed: 'render_failed',
  failed: 'render_failed',
  invalid_texture: 'invalid_skin',
  unavailable: 'overloaded',
  unreachable: 'render_unavailable',
};

/** Maps a thrown value to an ApiError; null when it is unexpected (a bug or an outage). */
export function toApiError(error: unknown): ApiError | null {
  if (isApiError(error)) return error;
  if (error instanceof RenderError) {
    return new ApiError(RENDER_ERRORS[error.kind], { detail: { zh: error.zh, en: error.message }, retryAfter: error.retryAfterSeconds, cause: error });
  }
  const e = error as { status?: number; expose?: boolean; message?: string; code?: string } | null;
  if (e && typeof e.status === 'number' && e.expose && HTTP_STATUS_CODES[e.status]) {
    return new ApiError(HTTP_STATUS_CODES[e.status], { cause: error });
  }
  return null;
}

/**
 * A query parameter given twice is ambiguous wherever it is, so it is refused everywhere but in a
 * preflight: that one is answered, so the browser sends the request and shows its 400.
 */
function rejectRepeatedParameters(ctx: Context): void {
  if (!ctx.querystring || ctx.method === 'OPTIONS') return;
  for (const [name, value] of Object.entries(ctx.query)) {
    if (Array.isArray(value)) throw new ApiError('bad_request', { detail: { zh: `${name.slice(0, 64)} 只能出现一次`, en: `${name.slice(0, 64)} is given more than once` } });
  }
}

export function errorHandler(format: ErrorFormatter, log: () => Logger): Middleware {
  // A 5xx comes by the thousand while a dependency is down: each code is logged as a state.
  const failing = new Map<ErrorCode, StateLog>();
  const failed = (error: ApiError, path: string) => {
    let state = failing.get(error.code);
    if (!state) failing.set(error.code, state = new StateLog(log(), 'request failed'));
    state.hit({ code: error.code, detail: error.detail, path });
  };
  return async (ctx, next) => {
    try {
      rejectRepeatedParameters(ctx);
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new ApiError('route_not_found', { detail: ctx.path });
    } catch (error) {
      let apiError = toApiError(error);
      if (!apiError) {
        log().error('unexpected error', { err: error, path: ctx.path });
        apiError = new ApiError('internal_error');
      } else if (apiError.status >= 500) {
        failed(apiError, ctx.path);
      }
      // Part of a reply is already on the wire: nothing truthful can follow, Koa ends it.
      if (ctx.headerSent) return;
      resetHeaders(ctx, apiError);
      ctx.status = apiError.status;
      ctx.body = format(apiError, ctx);
    }
  };
}
