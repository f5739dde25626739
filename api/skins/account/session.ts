// Login sessions: koa-session with the session data kept server-side in a keyv namespace (Redis
// when configured, so a session works on every instance); the cookie holds only a signed id.
import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import session from 'koa-session';
import type { Cache } from '../../cache.ts';
import type { TokenSet } from './external-account.ts';

export const SESSION_COOKIE = 'skinfarm.sid';
const SESSION_SECONDS = 7 * 86_400;

export interface AccountSession {
  oauthState?: string;
  user?: { id: number; name: string };
  auth?: TokenSet;
}

export function sessionMiddleware(app: Koa<any>, cache: Cache, options: { secret: string | null; secure: boolean }): Koa.Middleware {
  app.keys = [options.secret ?? randomBytes(32).toString('hex')];
  const store = cache.namespace<Record<string, unknown>>('session', SESSION_SECONDS, 0, true);
  return session({
    key: SESSION_COOKIE,
    maxAge: SESSION_SECONDS * 1000,
    httpOnly: true,
    sameSite: 'lax',
    secure: options.secure,
    signed: true,
    rolling: false,
    renew: true,
    store: {
      get: async (key: string) => (await store.get(key))?.value,
      set: async (key: string, value: Record<string, unknown>) => store.set(key, value),
      destroy: async (key: string) => store.delete(key),
    },
  }, app);
}
