// Outermost middleware: request id, timing and identity headers on every response (errors and
// 404s included), and one structured access-log line per request.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import type { Logger } from '../../shared/log.ts';
import { OTHER_ROUTE, recordRequest } from '../metrics.ts';
import { clientAddress, peerTrusted, type TrustProxy } from './client-address.ts';

export interface RequestState {
  requestId: string;
  /** The service's logger bound to this request (made on first use: most requests log nothing). */
  log: Logger;
  /** The peer is a trusted proxy: its X-Forwarded-Proto/Host may be used. */
  viaTrustedProxy: boolean;
  /** The path template of the route that took the request (set by its router): the metrics label. */
  route?: string;
}

const INCOMING_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The X-Powered-By value of a service. */
export const poweredBy = (service: string, version: string) => `Skinfarm-${service}/${version}`;

/** The client's X-Request-Id when it is a plain token, else a new one. */
export function requestIdFor(incoming: string | undefined): string {
  return incoming !== undefined && INCOMING_ID.test(incoming) ? incoming : randomUUID();
}

/** The client's address as TRUST_PROXY says (Koa's own, the peer's address as given, without it). */
export function clientIp(trust: TrustProxy, req: IncomingMessage): string {
  const peer = req.socket.remoteAddress ?? '';
  if (trust.mode === 'none') return peer;
  const forwarded = req.headers['x-forwarded-for'];
  return clientAddress(trust, peer, (Array.isArray(forwarded) ? forwarded.join(',') : forwarded) || undefined);
}

/** Milliseconds since a process.hrtime.bigint() reading. */
export const elapsedMs = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e6;

/** X-Response-Time's value. */
export const responseTime = (ms: number) => `${ms.toFixed(2)}ms`;

/** Metrics and, when ACCESS_LOG is on, the access-log line of one answered request. */
export function requestDone(service: string, log: Logger | (() => Logger), accessLog: boolean,
  done: { method: string; path: string; status: number; ms: number; ip: string }, route: string): void {
  recordRequest(service, route, done.status, done.ms);
  // The path only: query strings can carry OAuth codes and other secrets.
  if (accessLog) (typeof log === 'function' ? log() : log).info('request', { ...done, ms: Math.round(done.ms * 100) / 100 });
}

export function requestContext(service: string, version: string, log: Logger, accessLog: boolean, trust: TrustProxy): Middleware {
  const identity = poweredBy(service, version);
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    if (trust.mode !== 'none') {
      ctx.state.viaTrustedProxy = peerTrusted(trust, ctx.socket.remoteAddress ?? '');
      ctx.request.ip = clientIp(trust, ctx.req);
    } else {
      ctx.state.viaTrustedProxy = false;
    }
    const requestId = requestIdFor(ctx.get('X-Request-Id'));
    ctx.state.requestId = requestId;
    let bound: Logger | undefined;
    const requestLog = () => (bound ??= log.child({ req: requestId }));
    Object.defineProperty(ctx.state, 'log', { get: requestLog, enumerable: true, configurable: true });
    ctx.set('X-Request-Id', requestId);
    ctx.set('X-Powered-By', identity);
    try {
      await next();
    } finally {
      const ms = elapsedMs(started);
      ctx.set('X-Response-Time', responseTime(ms));
      requestDone(service, requestLog, accessLog, { method: ctx.method, path: ctx.path, status: ctx.status, ms, ip: ctx.ip }, ctx.state.route ?? OTHER_ROUTE);
    }
  };
}
