// The Koa app every service starts from: the shared middleware stack in its fixed order.
import Koa from 'koa';
import type { Logger } from '../../shared/log.ts';
import { metricsRoute } from '../metrics.ts';
import { readinessRoute, type Readiness } from '../readiness.ts';
import type { Config } from '../config.ts';
import { VERSION } from '../version.ts';
import { answerPreflight, cors } from './cors.ts';
import { lagMonitor } from './load-shed.ts';
import { jsonSerializer } from './envelope.ts';
import { errorHandler, type ErrorFormatter } from './errors.ts';
import { registerShell } from './client-error.ts';
import { poweredBy, requestContext, type RequestState } from './request-context.ts';
import { pageHeaders } from './page.ts';
import type { RateLimiter } from './rate-limit.ts';
import { quotaGroup, SITE_GROUP } from './route-table.ts';
import { ServiceRoutes } from './routes.ts';

export type AppState = RequestState;

export interface HttpAppOptions {
  service: string; log: Logger; formatError: ErrorFormatter;
  /** TRUST_PROXY, ACCESS_LOG and MAX_EVENT_LOOP_LAG_MS: every service applies them the same way. */
  config: Pick<Config, 'trustProxy' | 'accessLog' | 'maxLagMs' | 'siteRateLimit'>;
  /** What /ready reports (absent while a port only answers "starting"). */
  readiness?: Readiness;
  /** Counts the shell's own answers in SITE_GROUP (absent while a port only answers "starting"). */
  limiter?: RateLimiter;
}

/**
 * The shell's own answers count in SITE_GROUP as the routes of no other group do: /ready,
 * /metrics and CORS preflights (OPTIONS, any path) before they are answered, a request no route
 * took (404, 405) once that is known. Inside the error handler: a refusal is the service's 429.
 */
function shellLimit(limiter: RateLimiter, config: HttpAppOptions['config']): Koa.Middleware {
  const counted = limiter.middleware(quotaGroup(SITE_GROUP, config as Config));
  return async (ctx, next) => {
    if (ctx.method === 'OPTIONS' || ctx.path === '/ready' || ctx.path === '/metrics') return counted(ctx, next);
    try {
      await next();
    } finally {
      if (ctx.state.route === undefined) await counted(ctx, async () => {});
    }
  };
}

export interface HttpApp { app: Koa<AppState>; routes: ServiceRoutes }

export function createHttpApp(options: HttpAppOptions): HttpApp {
  // Koa's own proxy mode believes the left-most X-Forwarded-For entry; requestContext decides instead.
  const app = new Koa<AppState>({ proxy: false });
  // Errors are answered by errorHandler; Koa's default logger would print stack traces.
  app.silent = true;
  registerShell(app as never, { poweredBy: poweredBy(options.service, VERSION), format: options.formatError });
  app.on('error', (err: unknown) => options.log.error('koa error', { err }));
  app.use(requestContext(options.service, VERSION, options.log, options.config.accessLog, options.config.trustProxy));
  app.use(jsonSerializer());
  const routes = new ServiceRoutes(app);
  app.use(cors(routes));
  // Outside the error handler: an HTML page answered on an error path gets them too.
  app.use(pageHeaders());
  app.use(errorHandler(options.formatError, () => options.log));
  if (options.limiter) app.use(shellLimit(options.limiter, options.config));
  app.use(answerPreflight());
  app.use(metricsRoute());
  if (options.readiness) app.use(readinessRoute(options.service, options.readiness));
  app.use(lagMonitor.middleware(options.config.maxLagMs));
  app.use(routes.methodGuard());
  return { app, routes };
}
