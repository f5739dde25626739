// A real, standards-compliant OAuth 2.0 authorization server (oidc-provider from the registry)
// shaped like LittleSkin's: /oauth/authorize and /oauth/token, PKCE required, the client
// authenticates with HTTP Basic only, refresh tokens rotate (a spent one revokes the whole
// grant). Beside it, a Blessing-Skin-shaped user API (/api/user, /api/players,
// /api/premium-verification) that answers as RFC 6750 says: 401 invalid_token, 403
// insufficient_scope. The consent is a plain form at /interaction/{uid} that tests post to.
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type KoaContextWithOIDC } from 'oidc-provider';
import { startFakeUpstream, type FakeUpstream } from '../../scripts/fake-upstream/server.ts';
import { CookieJar } from './cookie-jar.ts';
import { startRedis, type TestRedis } from './redis.ts';
import { startApp, type RunningApp } from './service.ts';

export const SERVER_SCOPES = ['User.Read', 'Player.Read', 'PremiumVerification.Read', 'Yggdrasil.MinecraftToken.Create'];

export interface OAuthServerOptions {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** Access-token lifetime in seconds (default 3600). */
  accessTokenTtl?: number;
  /** Names /api/players lists for the user (they should exist at the Yggdrasil the service asks). */
  players?: string[];
  premiumUuid?: string;
}

/** One outcome at the token endpoint. */
export interface GrantEvent { grantType: string; ok: boolean; error?: string }

export interface OAuthServer {
  url: string;
  grants: GrantEvent[];
  /** Requests that reached /oauth/token, counted as they arrive (before any hold). */
  tokenCalls: number;
  /** When set, each /oauth/token request waits for it before the server handles it (a slow provider). */
  holdToken: (() => Promise<unknown>) | null;
  close(): Promise<void>;
}

const API = 'https://api.littleskin.test';

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export async function startOAuthServer(options: OAuthServerOptions): Promise<OAuthServer> {
  let provider!: Provider;
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const handled = path.startsWith('/interaction/') ? interaction(req, res, path.split('/')[2])
      : path.startsWith('/api/') ? api(req, res, path)
        : path === '/oauth/token' ? token(req, res)
          : null;
    if (handled) handled.catch((error: Error) => sendJson(res, 500, { error: 'server_error', error_description: error.message }));
    else provider.callback()(req, res);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const grants: GrantEvent[] = [];
  const handle: OAuthServer = {
    url,
    grants,
    tokenCalls: 0,
    holdToken: null,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };

  provider = new Provider(url, {
    clients: [{
      client_id: options.clientId,
      client_secret: options.clientSecret,
      redirect_uris: [options.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    }],
    clientAuthMethods: ['client_secret_basic'],
    routes: { authorization: '/oauth/authorize', token: '/oauth/token' },
    pkce: { required: () => true },
    rotateRefreshToken: true,
    issueRefreshToken: async () => true,
    features: {
      devInteractions: { enabled: false },
      // Every access token is for the user API, with the scopes granted at the consent.
      resourceIndicators: {
        enabled: true,
        defaultResource: () => API,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: SERVER_SCOPES.join(' '), accessTokenFormat: 'opaque', accessTokenTTL: options.accessTokenTtl ?? 3600 }),
      },
    },
    interactions: { url: (_ctx: KoaContextWithOIDC, found) => `/interaction/${found.uid}` },
    findAccount: async (_ctx: KoaContextWithOIDC, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    cookies: { keys: ['oauth-server-test-key'] },
    // Set explicitly so that the server does not warn about its defaults.
    jwks: { keys: [generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' })] },
    ttl: { Interaction: 600, Session: 3600, Grant: 86_400, AccessToken: options.accessTokenTtl ?? 3600, AuthorizationCode: 60, RefreshToken: 86_400 },
  });
  provider.on('grant.success', (ctx: KoaContextWithOIDC) => grants.push({ grantType: String(ctx.oidc.params?.grant_type), ok: true }));
  provider.on('grant.error', (ctx: KoaContextWithOIDC, error: Error & { error?: string }) => grants.push({ grantType: String(ctx.oidc.params?.grant_type), ok: false, error: error.error }));

  /** The token endpoint, counted, and held by `holdToken` first. */
  async function token(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    handle.tokenCalls += 1;
    await handle.holdToken?.();
    await provider.callback()(req, res);
  }

  /** GET: what is asked (JSON). POST decision=approve|deny: the user's answer. */
  async function interaction(req: http.IncomingMessage, res: http.ServerResponse, uid: string): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) return sendJson(res, 400, { error: 'invalid_request' });
    if (req.method === 'GET') return sendJson(res, 200, { uid, prompt: details.prompt.name, scope: details.params.scope });
    const form = await readForm(req);
    if (form.get('decision') !== 'approve') {
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user denied the request.' }, { mergeWithLastSubmission: false });
      return;
    }
    const accountId = form.get('account') ?? '1';
    const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
    grant.addResourceScope(API, String(details.params.scope ?? ''));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }

  /** The bearer API: the token looked up at the server that issued it. */
  async function api(req: http.IncomingMessage, res: http.ServerResponse, path: string): Promise<void> {
    const needs: Record<string, string> = { '/api/user': 'User.Read', '/api/players': 'Player.Read', '/api/premium-verification': 'PremiumVerification.Read' };
    const scope = needs[path];
    if (!scope) return sendJson(res, 404, { message: 'Not Found' });
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const token = bearer ? await provider.AccessToken.find(bearer) : undefined;
    if (!token || token.isExpired) {
      return sendJson(res, 401, { message: 'Unauthenticated.' }, { 'www-authenticate': 'Bearer realm="api", error="invalid_token"' });
    }
    if (!(token.scope ?? '').split(' ').includes(scope)) {
      return sendJson(res, 403, { message: 'Invalid scope(s) provided.' }, { 'www-authenticate': `Bearer realm="api", error="insufficient_scope", scope="${scope}"` });
    }
    const uid = Number(token.accountId);
    if (path === '/api/user') return sendJson(res, 200, { uid, email: `user${uid}@example.test`, nickname: `user-${uid}`, avatar: 0, score: 1000, permission: 0, verified: true });
    if (path === '/api/players') return sendJson(res, 200, (options.players ?? []).map((name, i) => ({ pid: i + 1, uid, name, tid_skin: 0, tid_cape: 0 })));
    if (options.premiumUuid) return sendJson(res, 200, { code: 0, verified: true, uuid: options.premiumUuid });
    return sendJson(res, 404, { code: 0, verified: false });
  }

  return handle;
}

/**
 * A user at the server: from the authorization address to the consent, which is answered, and
 * on to the address the server sends the browser back to (not fetched). `prompt` is what the
 * consent asked first.
 */
export async function answerConsent(browser: CookieJar, authorizeUrl: string, decision: 'approve' | 'deny', account = 7): Promise<{ consent: URL; prompt: string; callback: URL }> {
  const consent = await browser.follow(authorizeUrl, (u) => u.pathname.startsWith('/interaction/'));
  const asked = await browser.go(consent.href);
  const answered = await browser.go(consent.href, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `decision=${decision}&account=${account}` });
  const callback = await browser.follow(new URL(answered.location!, consent).href, (u) => u.pathname === '/oauth/external/callback');
  return { consent, prompt: asked.json?.prompt, callback };
}

/** A browser logged in to our service at `base` as `account`, everything asked approved. */
export async function loggedIn(base: string, account: number): Promise<CookieJar> {
  const browser = new CookieJar();
  const start = await browser.go(`${base}/oauth/external`);
  const { callback } = await answerConsent(browser, start.location!, 'approve', account);
  const done = await browser.go(`${base}/oauth/external/callback${callback.search}`);
  if (done.status !== 302) throw new Error(`the login failed: HTTP ${done.status}`);
  return browser;
}

export interface InstancePair { redis: TestRedis; fake: FakeUpstream; server: OAuthServer; a: RunningApp; b: RunningApp; stop(): Promise<void> }

/**
 * Two skins instances on one private Redis, logging in at a real authorization server whose 20 s
 * access tokens sit inside the 30 s refresh margin (so every account call refreshes first).
 * `env` adds to the instances' settings (their upstream timeout and retries, which size the
 * refresh lock's lease).
 */
export async function startInstancePair(client: { clientId: string; clientSecret: string }, env: Record<string, string>): Promise<InstancePair> {
  const redirect = 'http://127.0.0.1:1/oauth/external/callback';
  const redis = await startRedis();
  const fake = await startFakeUpstream();
  const server = await startOAuthServer({ ...client, redirectUri: redirect, accessTokenTtl: 20, premiumUuid: '069a79f444e94726a5befca90e38aaf5' });
  const settings = {
    SERVICES: 'skins', REDIS_URL: redis.url, ...fake.env, EXTERNAL_URL: server.url,
    OAUTH_CLIENT_ID: client.clientId, OAUTH_CLIENT_SECRET: client.clientSecret, OAUTH_REDIRECT_URL: redirect, ...env,
  };
  const [a, b] = await Promise.all([startApp(settings), startApp(settings)]);
  return {
    redis, fake, server, a, b,
    async stop() {
      await Promise.all([a.stop(), b.stop()]);
      await server.close();
      await fake.close();
      await redis.stop();
    },
  };
}
