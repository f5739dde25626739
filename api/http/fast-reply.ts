// Answers written outside the Koa stack (a fast path for hot requests) carry everything the Koa
// shell adds to a reply: request id, identity, CORS origin, X-Response-Time, metrics and the
// access-log line (the caller gives Access-Control-Expose-Headers with its own headers).
// Constant headers are built once; a reply is one writeHead with a flat header list.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../shared/log.ts';
import type { Config } from '../config.ts';
import { VERSION } from '../version.ts';
import { CORS_HEADERS } from './cors.ts';
import { lagMonitor } from './load-shed.ts';
import { clientIp, elapsedMs, poweredBy, requestDone, requestIdFor, responseTime } from './request-context.ts';

export interface FastRequest { started: bigint; requestId: string; ip: string; path: string; route: string }

export class FastReplies {
  private readonly service: string;
  private readonly log: Logger;
  private readonly config: Pick<Config, 'trustProxy' | 'accessLog' | 'maxLagMs'>;
  private readonly shell: string[];

  constructor(service: string, log: Logger, config: Pick<Config, 'trustProxy' | 'accessLog' | 'maxLagMs'>) {
    this.service = service;
    this.log = log;
    this.config = config;
    this.shell = ['X-Powered-By', poweredBy(service, VERSION), 'Access-Control-Allow-Origin', CORS_HEADERS['Access-Control-Allow-Origin']];
  }

  /** False while the event loop lags past MAX_EVENT_LOOP_LAG_MS: Koa sheds those requests. */
  get open(): boolean {
    return !(this.config.maxLagMs > 0 && lagMonitor.lagMs > this.config.maxLagMs);
  }

  /** `started`: process.hrtime.bigint() when the request came; `route`: the path template of the route answered (its metrics label). */
  begin(req: IncomingMessage, started: bigint, path: string, route: string): FastRequest {
    const incoming = req.headers['x-request-id'];
    return { started, requestId: requestIdFor(typeof incoming === 'string' ? incoming : undefined), ip: clientIp(this.config.trustProxy, req), path, route };
  }

  /** Sends the reply: `headers` is a flat name, value list; a HEAD request gets them without the body. */
  send(req: IncomingMessage, res: ServerResponse, request: FastRequest, status: number, headers: string[], body: Buffer | null): void {
    const ms = elapsedMs(request.started);
    res.writeHead(status, ['X-Request-Id', request.requestId, ...this.shell, ...headers, 'X-Response-Time', responseTime(ms)]);
    res.end(req.method === 'HEAD' ? undefined : body ?? undefined);
    requestDone(this.service, () => this.log.child({ req: request.requestId }), this.config.accessLog,
      { method: req.method!, path: request.path, status, ms, ip: request.ip }, request.route);
  }
}
