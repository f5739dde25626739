// Routes as data (the idea of browserless's route classes): each entry declares its method, path,
// rate-limit group, caching, parameters and what /openapi.json says about it, plus a thin handler.
// The same table registers the @koa/router routes (and so the Allow lists and CORS preflights),
// applies the limiter and the caching, reads the parameters, feeds the OpenAPI builder (which the
// composition root gives every table) and the tests.
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { ErrorCode } from '../../shared/errors.ts';
import type { RequestBody, Response, Schema, SecurityRequirement, SecurityScheme } from '../docs/openapi-types.ts';
import type { Config, ServiceName } from '../config.ts';
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

/**
 * A route's per-IP quota group. Its limit is a number, or, where a setting gives it
 * (MEDIA_RATE_LIMIT...), read from the configuration, which declares the variable and its default.
 */
export interface RouteLimit extends Omit<RateLimitGroup, 'limit'> { limit: number | ((config: Config) => number) }

/** The declarative part of a route: all that the docs and the tests read. */
export interface RouteSpec {
  method: RouteMethod;
  /** OpenAPI template (/v1/player/{name}); the router gets the :name form. */
  path: string;
  /** Where the document lists it when that differs (see docs/openapi.md, the render upload). */
  docPath?: string;
  /** Its quota group; none given: SITE_GROUP. */
  limit?: RouteLimit;
  /** Counted in no group at all: only what the contract exempts (/v1/status, /v1/sources). */
  unmetered?: true;
  /** Cache-Control of its answers (an error sets its own); a handler may only make one answer stricter. */
  cacheControl?: string;
  params?: readonly Param[];
  doc: OperationDoc;
}

export interface Route<D> extends RouteSpec {
  /** Middleware after the limiter and before the parameters are read (an upload form, a guard). */
  before?: (deps: D) => Middleware[];
  handle: (ctx: Context, deps: D, params: Params) => unknown;
}

/** One service's routes, in registration order, and what the document says of the service. */
export interface RouteTable {
  service: ServiceName;
  /** What the service is for (its tag's description). */
  description: string;
  routes: readonly RouteSpec[];
  /** The component schemas its routes name (`ref` in api/docs/schemas.ts). */
  schemas: Record<string, Schema>;
  /** The security schemes its routes require by name. */
  securitySchemes: Record<string, SecurityScheme>;
  /** Its error body whose `code` is one of `codes`. */
  errorBody: (codes: readonly string[]) => Schema;
}

/**
 * The routes no other group counts (pages, health, the docs and the document) and the shell's own
 * answers (/ready, /metrics, CORS preflights, 404s): a generous group of their own, so that no
 * route is free to flood (issue #39: /openapi.json serialised 613 KB a request, unmetered).
 */
export const SITE_GROUP: RouteLimit = { name: 'site', limit: (config) => config.siteRateLimit };

/** The group a route counts in, or null for one the contract exempts. */
export function routeLimit(route: Pick<RouteSpec, 'limit' | 'unmetered'>): RouteLimit | null {
  return route.unmetered ? null : route.limit ?? SITE_GROUP;
}

/** The group with the limit this configuration gives it. */
export function quotaGroup(limit: RouteLimit, config: Config): RateLimitGroup {
  return { ...limit, limit: typeof limit.limit === 'number' ? limit.limit : limit.limit(config) };
}

/** What a table's router counts with: the process's limiter, and the configuration quotas come from. */
export interface Limits { limiter: RateLimiter; config: Config }

const routerPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/** A router with the table's routes over `deps`. */
export function tableRouter<D>(routes: readonly Route<D>[], deps: D, { limiter, config }: Limits): Router {
  const router = new Router();
  for (const route of routes) {
    const params = route.params ?? [];
    const handler: Middleware = async (ctx) => {
      if (route.cacheControl) ctx.set('Cache-Control', route.cacheControl);
      await route.handle(ctx, deps, readParams(ctx, params));
    };
    // A route may default `pretty` to 0 (api/docs/fragments.ts prettyOnRequest): the serialiser follows it.
    const compact = params.some((p) => p.name === 'pretty' && p.schema.default === 0);
    const label: Middleware = (ctx, next) => {
      ctx.state.route = route.path;
      if (compact) ctx.state.compactJson = true;
      return next();
    };
    const limit = routeLimit(route);
    router.register(routerPath(route.path), [route.method], [
      label,
      ...(limit ? [limiter.middleware(quotaGroup(limit, config))] : []),
      ...(route.before?.(deps) ?? []),
      handler,
    ]);
  }
  return router;
}

/** A part of a service's table whose handlers take their own dependencies, picked from the service's parts (P). */
export interface TableSection<P> { routes: readonly RouteSpec[]; router(parts: P, limits: Limits): Router }

export function section<P, D>(routes: readonly Route<D>[], pick: (parts: P) => D): TableSection<P> {
  return { routes, router: (parts, limits) => tableRouter(routes, pick(parts), limits) };
}
