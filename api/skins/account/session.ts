// Login sessions: the cookie holds only a random id (signed with SESSION_SECRET); the data,
// upstream tokens included, stays server-side in the session store. Only a completed login
// creates a session: anonymous traffic never writes to the store.
import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import type { Context } from 'koa';
import type { SessionData, SessionStore } from './session-store.ts';

export const SESSION_COOKIE = 'skinfarm.sid';
const SESSION_MS = 7 * 86_400_000;

/** A loaded session: its id and data; `endsAt` is fixed at login (sessions do not roll). */
export interface Session { id: string; data: SessionData & { endsAt: number } }

export class Sessions {
  readonly store: SessionStore;
  private readonly secure: boolean;

  constructor(app: Koa<any>, store: SessionStore, options: { secret: string | null; secure: boolean }) {
    app.keys = [options.secret ?? randomBytes(32).toString('hex')];
    this.store = store;
    this.secure = options.secure;
  }

  /** The request's session, or null (no cookie, a forged one, or an ended session). */
  async load(ctx: Context): Promise<Session | null> {
    const id = ctx.cookies.get(SESSION_COOKIE, { signed: true });
    if (!id) return null;
    const data = (await this.store.get(id)) as Session['data'] | undefined;
    return data ? { id, data } : null;
  }

  /** A fresh id at every login, so an id planted before the login is worth nothing after it. */
  async start(ctx: Context, data: SessionData): Promise<void> {
    const previous = ctx.cookies.get(SESSION_COOKIE, { signed: true });
    if (previous) await this.store.delete(previous);
    const id = randomBytes(32).toString('base64url');
    await this.store.set(id, { ...data, endsAt: Date.now() + SESSION_MS } as Session['data'], SESSION_MS);
    ctx.cookies.set(SESSION_COOKIE, id, { signed: true, httpOnly: true, sameSite: 'lax', secure: this.secure, maxAge: SESSION_MS, overwrite: true });
  }

  /** Writes changed data (new tokens) at once, keeping the session's end. */
  async save(session: Session): Promise<void> {
    const left = session.data.endsAt - Date.now();
    if (left > 0) await this.store.set(session.id, session.data, left);
  }

  async end(ctx: Context, session: Session | null = null): Promise<void> {
    const id = session?.id ?? ctx.cookies.get(SESSION_COOKIE, { signed: true });
    if (id) await this.store.delete(id);
    ctx.cookies.set(SESSION_COOKIE, null, { signed: true, httpOnly: true, sameSite: 'lax', secure: this.secure, overwrite: true });
  }
}
