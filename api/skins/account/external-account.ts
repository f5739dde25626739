// The external service's OAuth 2.0 (Laravel Passport) and the user APIs a login unlocks.
// Blessing Skin answers a missing scope with HTTP 200 {code: 403}; that becomes missing_scope.
import { ApiError } from '../../../shared/errors.ts';
import type { UpstreamClient } from '../upstream/client.ts';

export interface OAuthSettings { clientId: string; clientSecret: string; redirectUrl: string; scopes: string[] }

export interface TokenSet { accessToken: string; refreshToken: string | null; expiresAt: number }

export interface ExternalUser { id: number; name: string; email?: string }
export interface ExternalPlayer { pid: number; name: string }

export interface GameToken {
  accessToken: string;
  clientToken: string;
  selectedProfile: { id: string; name: string } | null;
  availableProfiles: { id: string; name: string }[];
}

/** Thrown when the bearer token is no longer accepted (expired, revoked): refresh or log out. */
export class TokenRejected extends Error {}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class ExternalAccount {
  private readonly client: UpstreamClient;
  private readonly url: string;
  private readonly yggdrasilUrl: string;
  readonly settings: OAuthSettings;

  constructor(client: UpstreamClient, urls: { url: string; yggdrasilUrl: string }, settings: OAuthSettings) {
    this.client = client;
    this.url = urls.url;
    this.yggdrasilUrl = urls.yggdrasilUrl;
    this.settings = settings;
  }

  authorizeUrl(state: string): string {
    const query = new URLSearchParams({
      client_id: this.settings.clientId,
      redirect_uri: this.settings.redirectUrl,
      response_type: 'code',
      scope: this.settings.scopes.join(' '),
      state,
    });
    return `${this.url}/oauth/authorize?${query}`;
  }

  exchangeCode(code: string): Promise<TokenSet> {
    return this.token({ grant_type: 'authorization_code', code, redirect_uri: this.settings.redirectUrl });
  }

  refresh(refreshToken: string): Promise<TokenSet> {
    return this.token({ grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  private async token(grant: Record<string, string>): Promise<TokenSet> {
    const response = await this.client.json<Record<string, unknown>>(`${this.url}/oauth/token`, {
      method: 'POST',
      form: { ...grant, client_id: this.settings.clientId, client_secret: this.settings.clientSecret },
      expect: [400, 401],
    });
    const body = response.body;
    if (response.status !== 200 || !isObject(body) || typeof body.access_token !== 'string') {
      const reason = isObject(body) && typeof body.error === 'string' ? body.error : `HTTP ${response.status}`;
      throw new ApiError('oauth_failed', { detail: reason.slice(0, 64) });
    }
    // Passport always sends expires_in; without it, assume an hour.
    const expiresIn = Number.isFinite(Number(body.expires_in)) && body.expires_in !== null ? Number(body.expires_in) : 3600;
    return {
      accessToken: body.access_token,
      refreshToken: typeof body.refresh_token === 'string' ? body.refresh_token : null,
      expiresAt: Date.now() + expiresIn * 1000,
    };
  }

  /** A bearer call; 401 means the token was rejected, {code: 403} a missing scope. */
  private async bearer(path: string, accessToken: string, request: { method?: 'GET' | 'POST'; json?: unknown; expect?: number[] } = {}) {
    const response = await this.client.json<unknown>(path, {
      method: request.method ?? 'GET',
      json: request.json,
      headers: { authorization: `Bearer ${accessToken}` },
      expect: [401, ...(request.expect ?? [])],
    });
    if (response.status === 401) throw new TokenRejected('token rejected');
    if (isObject(response.body) && response.body.code === 403) {
      throw new ApiError('missing_scope', { detail: typeof response.body.message === 'string' ? response.body.message.slice(0, 120) : undefined });
    }
    return response;
  }

  async user(accessToken: string): Promise<ExternalUser> {
    const { body } = await this.bearer(`${this.url}/api/user`, accessToken);
    if (!isObject(body) || typeof body.uid !== 'number') throw this.client.malformed('user');
    return { id: body.uid, name: typeof body.nickname === 'string' ? body.nickname : `user ${body.uid}` };
  }

  async players(accessToken: string): Promise<ExternalPlayer[]> {
    const { body } = await this.bearer(`${this.url}/api/players`, accessToken);
    if (!Array.isArray(body)) throw this.client.malformed('players');
    return body.filter((p): p is ExternalPlayer => isObject(p) && typeof p.name === 'string').map((p) => ({ pid: p.pid, name: p.name }));
  }

  /** Premium verification: the verified official UUID, or null when not verified (404). */
  async premium(accessToken: string): Promise<string | null> {
    const response = await this.bearer(`${this.url}/api/premium-verification`, accessToken, { expect: [404] });
    const body = response.body;
    if (response.status === 404) return null;
    if (!isObject(body)) throw this.client.malformed('premium verification');
    return body.verified === true && typeof body.uuid === 'string' ? body.uuid : null;
  }

  /** Yggdrasil game token for one of the user's profiles (never stored, never logged). */
  async gameToken(accessToken: string, uuid: string): Promise<GameToken> {
    const response = await this.bearer(`${this.yggdrasilUrl}/authserver/oauth`, accessToken, { method: 'POST', json: { uuid }, expect: [400, 403] });
    const body = response.body;
    if (response.status === 400 || response.status === 403) {
      const message = isObject(body) && typeof body.errorMessage === 'string' ? body.errorMessage.slice(0, 120) : undefined;
      throw new ApiError('forbidden', { detail: message });
    }
    if (!isObject(body) || typeof body.accessToken !== 'string' || typeof body.clientToken !== 'string') throw this.client.malformed('game token');
    const profile = (p: unknown) => (isObject(p) && typeof p.id === 'string' && typeof p.name === 'string' ? { id: p.id, name: p.name } : null);
    return {
      accessToken: body.accessToken,
      clientToken: body.clientToken,
      selectedProfile: profile(body.selectedProfile),
      availableProfiles: Array.isArray(body.availableProfiles) ? body.availableProfiles.map(profile).filter((p) => p !== null) : [],
    };
  }
}
