// Login sessions through koa-session with our SessionStore as its external store: the cookie
// holds only a random id (signed with SESSION_SECRET); the data, upstream tokens included, stays
// server-side. koa-session writes only when told to (autoCommit off): at login (regenerate: the
// old id destroyed, a new one) and at logout. Every save of koa-session starts maxAge afresh, so
// nothing else goes through it: the tokens a refresh brings are written by
// `SessionStore.replaceAuth` under the end set at login (`_expire`). Anonymous traffic never writes.
import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import type { Context } from 'koa';
import createSession from 'koa-session';
import type { SessionData, SessionStore } from './session-store.ts';

export const SESSION_COOKIE = 'skinfarm.sid';
const SESSION_MS = 7 * 86_400_000;

/** A loaded session: its id and data. */
export interface Session { id: string; data: SessionData }

/** The parts of koa-session's `ctx.session` used here (the package does not export its type). */
interface KoaSession extends Partial<SessionData> {
  readonly isNew: boolean;
  readonly externalKey?: string;
  regenerate(): Promise<void>;
  manuallyCommit(): Promise<void>;
}

const nothing = async () => {};

export class Sessions {
  readonly store: SessionStore;
  private readonly middleware: (ctx: Context, next: () => Promise<void>) => Promise<void>;
  private readonly read = new WeakSet<Context>();

  constructor(app: Koa<any>, store: SessionStore, options: { secret: string | null; secure: boolean }) {
    app.keys = [options.secret ?? randomBytes(32).toString('hex')];
    this.store = store;
    this.middleware = createSession({
      key: SESSION_COOKIE, maxAge: SESSION_MS, store,
      genid: () => randomBytes(32).toString('base64url'),
      autoCommit: false, rolling: false, renew: false,
      signed: true, httpOnly: true, sameSite: 'lax', secure: options.secure, overwrite: true,
    }, app);
  }

  /**
   * koa-session's session of the request. Its middleware runs here, once per request, rather than
   * on the whole app: only the handlers that need a session read the store.
   */
  private async current(ctx: Context): Promise<KoaSession> {
    if (!this.read.has(ctx)) {
      this.read.add(ctx);
      await this.middleware(ctx, nothing);
    }
    return ctx.session as KoaSession;
  }

  /** The request's session, or null (no cookie, a forged one, or an ended session). */
  async load(ctx: Context): Promise<Session | null> {
    const { isNew, externalKey, user, auth } = await this.current(ctx);
    return isNew || !user || !auth ? null : { id: externalKey!, data: { user, auth } };
  }

  /** A fresh id at every login, so an id planted before the login is worth nothing after it. */
  async start(ctx: Context, data: SessionData): Promise<void> {
    // Read first, so that regenerate() destroys the session the request came with.
    await this.current(ctx);
    ctx.session = data;
    await (ctx.session as KoaSession).regenerate();
  }

  /** Destroys the session and clears the cookie (with autoCommit off: set to null, then commit). */
  async end(ctx: Context): Promise<void> {
    const session = await this.current(ctx);
    ctx.session = null;
    await session.manuallyCommit();
  }
}
