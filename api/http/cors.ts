// CORS is fully open (spec): every origin; preflights answered here, with the methods the
// service's route tables answer on the path (ServiceRoutes).
import type { Middleware } from 'koa';
import type { ServiceRoutes } from './routes.ts';

/** The headers every answer carries (a fast path sends the same pair). */
export const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'X-Request-Id, X-Response-Time, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Cache, ETag, Content-Range, Accept-Ranges, Content-Location, Content-Disposition',
} as const;

export function cors(routes: ServiceRoutes): Middleware {
  return async (ctx, next) => {
    ctx.set(CORS_HEADERS);
    if (ctx.method === 'OPTIONS') {
      ctx.set('Access-Control-Allow-Methods', routes.preflight(ctx.path).join(', '));
      ctx.set('Access-Control-Allow-Headers', ctx.get('Access-Control-Request-Headers') || 'Content-Type, X-API-Key, Authorization');
      ctx.set('Access-Control-Max-Age', '86400');
      ctx.status = 204;
      return;
    }
    await next();
  };
}
