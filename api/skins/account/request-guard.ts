// Cross-site request forgery guard of the state-changing account requests. The session cookie
// is SameSite=Lax, which still rides along from the same *site* (another port or subdomain of
// this host); so a request must come from this very origin when the browser says where it comes
// from (Sec-Fetch-Site, Origin), and a body must be JSON, which no HTML form can send.
import type { Context, Middleware } from 'koa';
import { ApiError } from '../../../shared/errors.ts';

/** Refuses a request the browser marks as coming from another origin; clients that send neither header pass. */
export function assertSameOrigin(ctx: Context, publicOrigin: string): void {
  const site = ctx.get('Sec-Fetch-Site').toLowerCase();
  if (site && site !== 'same-origin' && site !== 'none') {
    throw new ApiError('cross_site_request', { detail: 'Sec-Fetch-Site' });
  }
  const origin = ctx.get('Origin');
  // Koa 3's ctx.origin is the Origin header itself; this is the address the request came to.
  if (origin && origin !== publicOrigin && origin !== `${ctx.protocol}://${ctx.host}`) {
    throw new ApiError('cross_site_request', { detail: 'Origin' });
  }
}

/** Same origin and a JSON body (application/json, any parameters), checked before anything else. */
export function jsonFromSameOrigin(publicUrl: string): Middleware {
  const publicOrigin = new URL(publicUrl).origin;
  return async (ctx, next) => {
    assertSameOrigin(ctx, publicOrigin);
    if (ctx.request.type.toLowerCase() !== 'application/json') throw new ApiError('unsupported_media_type');
    await next();
  };
}
