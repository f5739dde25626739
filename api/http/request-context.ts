// Outermost middleware: request id, timing and identity headers on every response (errors and
// 404s included), and one structured access-log line per request.
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../shared/log.ts';
import { httpDuration, httpRequests, routeGroup } from '../metrics.ts';
import { clientAddress, peerTrusted, type TrustProxy } from './client-address.ts';

export interface RequestState {
  requestId: string; log: Logger;
  /** The peer is a trusted proxy: its X-Forwarded-Proto/Host may be used. */
  viaTrustedProxy: boolean;
}

const INCOMING_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The X-Powered-By value of a service. */
export const poweredBy = (service: string, version: string) => `Skinfarm-${service}/${version}`;

export function requestContext(service: string, version: string, log: Logger, accessLog: boolean, trust: TrustProxy): Middleware {
  const identity = poweredBy(service, version);
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    if (trust.mode !== 'none') {
      const peer = ctx.socket.remoteAddress ?? '';
      ctx.state.viaTrustedProxy = peerTrusted(trust, peer);
      ctx.request.ip = clientAddress(trust, peer, ctx.get('X-Forwarded-For') || undefined);
    } else {
      ctx.state.viaTrustedProxy = false;
    }
    const incoming = ctx.get('X-Request-Id');
    const requestId = INCOMING_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = log.child({ req: requestId });
    ctx.set('X-Request-Id', requestId);
    ctx.set('X-Powered-By', identity);
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      ctx.set('X-Response-Time', `${ms.toFixed(2)}ms`);
      const group = routeGroup(ctx.path);
      httpRequests.inc({ service, group, status: String(ctx.status) });
      httpDuration.observe({ service, group }, ms / 1000);
      // The path only: query strings can carry OAuth codes and other secrets.
      if (accessLog) ctx.state.log.info('request', { method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 100) / 100, ip: ctx.ip });
    }
  };
}
