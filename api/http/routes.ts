// The routers of one service and what they tell about a path: a request no route takes is 405 with
// Allow on a path some route serves with other methods, else 404 (never 501 or a 500); a CORS
// preflight names the same methods.
import type Router from '@koa/router';
import type Koa from 'koa';
import type { Middleware } from 'koa';
import { ApiError } from '../../shared/errors.ts';

export class ServiceRoutes {
  private readonly routers: Router[] = [];
  private readonly app: Koa;

  constructor(app: Koa) {
    this.app = app;
  }

  /** Adds a router's routes to the app, after whatever the app already has. */
  mount(router: Router): void {
    this.routers.push(router);
    this.app.use(router.routes());
  }

  /** Methods some route answers on this path (HEAD with GET, OPTIONS always: CORS answers it). */
  allowed(path: string): string[] {
    const methods = new Set<string>();
    for (const router of this.routers) {
      for (const layer of router.match(path, 'GET').path) for (const method of layer.methods) methods.add(method);
    }
    if (methods.size) methods.add('OPTIONS');
    return [...methods];
  }

  /** The methods a CORS preflight names: the path's, or on a path no route serves, every method the service answers. */
  preflight(path: string): string[] {
    const own = this.allowed(path);
    if (own.length) return own;
    const methods = new Set<string>();
    for (const router of this.routers) for (const layer of router.stack) for (const method of layer.methods) methods.add(method);
    methods.add('OPTIONS');
    return [...methods];
  }

  /** Outer middleware: turns an unrouted request on a known path into 405 with Allow. */
  methodGuard(): Middleware {
    return async (ctx, next) => {
      await next();
      if (ctx.status !== 404 || ctx.body !== undefined) return;
      const allowed = this.allowed(ctx.path);
      if (allowed.length && !allowed.includes(ctx.method)) {
        throw new ApiError('method_not_allowed', { detail: ctx.method, headers: { Allow: allowed.join(', ') } });
      }
    };
  }
}
