// Routes as data (the idea of browserless's route classes): each entry declares its method, path,
// rate-limit group, parameters and what /openapi.json says about it, plus a thin handler. The
// same table registers the @koa/router routes (and so ServiceRoutes' Allow lists), applies the
// limiter, reads the parameters, feeds api/docs/openapi.ts and the tests.
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { ErrorCode } from '../../shared/errors.ts';
import type { RequestBody, Response, SecurityRequirement } from '../docs/openapi.ts';
import type { ServiceName } from '../config.ts';
import { readParams, type DocContext, type Param, type Params } from './params.ts';
import type { RateLimiter, RateLimitGroup } from './rate-limit.ts';

export type RouteMethod = 'get' | 'post' | 'patch' | 'delete';

/** What the OpenAPI document says about an operation besides its parameters. */
export interface OperationDoc {
  summary: string;
  description?: string;
  body?: RequestBody | ((docs: DocContext) => RequestBody);
  ok: Response;
  /** Status of the success answer (200 unless given). */
  status?: '200' | '201' | '204' | '302';
  /** Other non-error answers (a redirect, a partial file). */
  more?: Record<string, Response>;
  errors?: readonly ErrorCode[];
  /** Error answers are HTML pages for a browser (a form post, a login callback). */
  htmlErrors?: boolean;
  /** Also described as HEAD: the GET's status and headers without a body. */
  head?: boolean;
  security?: SecurityRequirement[];
  /** Answers 304 to a matching If-None-Match. */
  conditional?: boolean;
  /** Still answered, for existing clients, but described as deprecated in favour of another route. */
  deprecated?: boolean;
  /**
   * A path several services answer (/, /health): one description shared by their entries, for
   * these services in this order (tools that take a path's first server get the first).
   */
  services?: readonly ServiceName[];
}

/** The declarative part of a route: all that the docs and the tests read. */
export interface RouteSpec {
  method: RouteMethod;
  /** OpenAPI template (/v1/player/{name}); the router gets the :name form. */
  path: string;
  /** Where the document lists it when that differs (see docs/openapi.md, the render upload). */
  docPath?: string;
  /** Per-IP quota group; its limit here is the default the docs state. */
  limit?: RateLimitGroup;
  params?: readonly Param[];
  doc: OperationDoc;
}

export interface Route<D> extends RouteSpec {
  /** Middleware after the limiter and before the parameters are read (an upload form, a guard). */
  before?: (deps: D) => Middleware[];
  handle: (ctx: Context, deps: D, params: Params) => unknown;
}

/** One service's routes, in registration order. */
export interface RouteTable { service: ServiceName; routes: readonly RouteSpec[] }

const routerPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/**
 * A router with the table's routes over `deps`. `quota` gives a group's configured limit where
 * the service's settings may differ from the documented default (MEDIA_RATE_LIMIT).
 */
export function tableRouter<D>(routes: readonly Route<D>[], deps: D, limiter: RateLimiter, quota: (group: RateLimitGroup) => number = (g) => g.limit): Router {
  const router = new Router();
  for (const route of routes) {
    const params = route.params ?? [];
    const handler: Middleware = async (ctx) => {
      await route.handle(ctx, deps, readParams(ctx, params));
    };
    const label: Middleware = (ctx, next) => {
      ctx.state.route = route.path;
      return next();
    };
    router.register(routerPath(route.path), [route.method], [
      label,
      ...(route.limit ? [limiter.middleware({ ...route.limit, limit: quota(route.limit) })] : []),
      ...(route.before?.(deps) ?? []),
      handler,
    ]);
  }
  return router;
}
