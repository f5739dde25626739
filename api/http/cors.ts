// CORS is fully open (spec): every origin; preflights named here, with the methods the service's
// route tables answer on the path (ServiceRoutes), and answered by answerPreflight inside the
// error handler, once the site group has counted them (app.ts), so a limited preflight gets the
// service's 429 envelope with these headers.
import type { Middleware } from 'koa';
import type { ServiceRoutes } from './routes.ts';

/** The headers every answer carries (a fast path sends the same pair). */
export const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'X-Request-Id, X-Response-Time, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Cache, ETag, Content-Range, Accept-Ranges, Content-Location, Content-Disposition',
} as const;

/** Sets the CORS headers on every answer, and a preflight's own (kept on an error answer). */
export function cors(routes: ServiceRoutes): Middleware {
  return async (ctx, next) => {
    ctx.set(CORS_HEADERS);
    if (ctx.method === 'OPTIONS') {
      ctx.set('Access-Control-Allow-Methods', routes.preflight(ctx.path).join(', '));
      ctx.set('Access-Control-Allow-Headers', ctx.get('Access-Control-Request-Headers') || 'Content-Type, X-API-Key, Authorization');
      ctx.set('Access-Control-Max-Age', '86400');
    }
    await next();
  };
}

/** Answers a preflight (204, no body): after the error handler and the site group's count. */
export function answerPreflight(): Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'OPTIONS') return next();
    ctx.status = 204;
  };
}
