// LittleSkin's public Yggdrasil API (docs/upstream.md B1-B3) and announcements (B9), under /external.
import { ANNOUNCEMENTS } from './announcements.ts';
import { parseJson, sendEmpty, sendJson } from './http.ts';
import { signingKey } from './keys.ts';
import { sessionProfile } from './profiles.ts';
import { externalTextureBaseUrl, type FakeContext, type FakeRoute } from './state.ts';

const SEARCH_MAX = 5;
const YGG = '/external/api/yggdrasil';

/** Yggdrasil's error format, used by every yggdrasil path. */
export function yggError(ctx: FakeContext, status: number, error: string, errorMessage: string): void {
  sendJson(ctx.res, status, { error, errorMessage });
}

async function metadata(ctx: FakeContext): Promise<void> {
  const site = `${ctx.state.baseUrl}/external`;
  const key = await signingKey('external');
  sendJson(ctx.res, 200, {
    meta: {
      serverName: 'Fake LittleSkin',
      implementationName: 'Yggdrasil API for Blessing Skin',
      implementationVersion: '5.1.1',
      links: { homepage: site, register: `${site}/auth/register` },
      'feature.non_email_login': true,
    },
    skinDomains: ctx.state.answers.skinDomains ?? [new URL(ctx.state.baseUrl).hostname],
    signaturePublickey: key.publicPem,
  });
}

function search(ctx: FakeContext): void {
  const body = parseJson(ctx.body);
  if (!Array.isArray(body)) return yggError(ctx, 400, 'IllegalArgumentException', 'Invalid request body.');
  const names = [...new Set(body.filter((n): n is string => typeof n === 'string'))];
  if (names.length > SEARCH_MAX) {
    return yggError(ctx, 403, 'ForbiddenOperationException', `You can query up to ${SEARCH_MAX} players in one request.`);
  }
  // The name is echoed as asked; the database match itself ignores case.
  const found = names.flatMap((name) => {
    const player = ctx.state.players.byName('external', name);
    return player ? [{ id: player.uuid, name }] : [];
  });
  sendJson(ctx.res, 200, found);
}

async function profile(ctx: FakeContext): Promise<void> {
  const player = ctx.state.players.byUuid('external', ctx.params[0]);
  if (!player) return sendEmpty(ctx.res, 204);
  const key = ctx.url.searchParams.get('unsigned') === 'false' ? await signingKey('external') : null;
  sendJson(ctx.res, 200, await sessionProfile(player, externalTextureBaseUrl(ctx.state), key));
}

export const externalRoutes: FakeRoute[] = [
  { method: '*', pattern: new RegExp(`^${YGG}/?$`), key: 'external.meta', handler: metadata },
  { method: 'POST', pattern: new RegExp(`^${YGG}/api/profiles/minecraft$`), key: 'external.bulk', handler: search },
  { method: 'GET', pattern: new RegExp(`^${YGG}/sessionserver/session/minecraft/profile/([^/]+)$`), key: 'external.profile', handler: profile },
  {
    method: 'GET', pattern: /^\/external\/api\/announcements\/?$/, key: 'external.announcements',
    handler: (ctx) => sendJson(ctx.res, 200, ANNOUNCEMENTS),
  },
];
