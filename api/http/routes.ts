// The routers of one service and the one rule for a request no route takes: a path that some route
// serves with other methods is 405 with Allow; any other path is 404 (never 501 or a 500).
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
