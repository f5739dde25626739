// The skins service's JSON envelope ({code, success, message, data, timestamp}) and the
// serialiser that honours `pretty` for every JSON body.
import type { Context, Middleware } from 'koa';
import type { ApiError } from '../../shared/errors.ts';
import { requestLanguage } from './i18n.ts';

export interface Envelope<T> {
  code: 0 | string; success: boolean; message: string;
  /** Skins errors only: the same explanation in English (`message` is Chinese, as the contract says). */
  message_en?: string;
  data: T | null; timestamp: number;
}

const now = () => Math.floor(Date.now() / 1000);

export function okEnvelope<T>(data: T): Envelope<T> {
  return { code: 0, success: true, message: 'ok', data, timestamp: now() };
}

export function errorEnvelope(error: ApiError): Envelope<null> {
  return { code: error.code, success: false, message: error.message, message_en: error.messageEn, data: null, timestamp: now() };
}

/**
 * The envelope of a service bound by no language (media): `message` in the reader's language
 * (./i18n.ts), one language per field; `ctx` is absent for a request Node refused before Koa.
 */
export function localizedErrorEnvelope(error: ApiError, ctx?: Context): Envelope<null> {
  return { code: error.code, success: false, message: error.messageIn(requestLanguage(ctx)), data: null, timestamp: now() };
}

/** Sets a successful envelope as the body. */
export function ok<T>(ctx: Context, data: T): void {
  ctx.body = okEnvelope(data);
}

/**
 * `pretty=0|false` gives compact JSON; anything else indents by two spaces, as does nothing, unless
 * the route answering made compact its default (`ctx.state.compactJson`, api/http/route-table.ts).
 */
export function wantsPretty(ctx: Context): boolean {
  const raw = ctx.query.pretty;
  const value = (Array.isArray(raw) ? raw[0] : raw)?.toLowerCase();
  // Empty is absent, as the parameter reader takes it.
  if (!value) return ctx.state.compactJson !== true;
  return !(value === '0' || value === 'false');
}

function isJsonBody(body: unknown): body is object {
  if (body === null || typeof body !== 'object') return false;
  if (Buffer.isBuffer(body) || body instanceof Uint8Array) return false;
  return typeof (body as { pipe?: unknown }).pipe !== 'function';
}

/** Serialises object bodies as JSON, indented unless `pretty` says otherwise. */
export function jsonSerializer(): Middleware {
  return async (ctx, next) => {
    await next();
    if (!isJsonBody(ctx.body)) return;
    const status = ctx.status;
    // Encoded once here: a string body is measured (Content-Length) and then encoded again on
    // write, two passes over answers of up to 130 KB (3 % of a search instance's CPU).
    ctx.body = Buffer.from(JSON.stringify(ctx.body, null, wantsPretty(ctx) ? 2 : 0));
    ctx.status = status;
    ctx.type = 'application/json; charset=utf-8';
  };
}
