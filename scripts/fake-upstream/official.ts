// Mojang's public profile API (docs/upstream.md A1-A3), under /official/{api,services,session}.
import { normalizeUuid } from '../../shared/uuid.ts';
import { parseJson, sendEmpty, sendJson } from './http.ts';
import { signingKey } from './keys.ts';
import type { FakePlayer } from './players.ts';
import { sessionProfile } from './profiles.ts';
import type { FakeContext, FakeRoute } from './state.ts';

const BULK_LIMIT = 10;

/** The path as the real host sees it, for the `path` field of Mojang error bodies. */
function upstreamPath(ctx: FakeContext): string {
  return ctx.url.pathname.replace(/^\/official\/[a-z]+/, '');
}

export function officialError(ctx: FakeContext, status: number, error: string, errorMessage: string, headers: Record<string, string> = {}): void {
  sendJson(ctx.res, status, { path: upstreamPath(ctx), errorType: error, error, errorMessage, developerMessage: errorMessage }, headers);
}

/** HangPlayer and FailPlayer misbehave wherever they are named; true when that took over. */
function misbehaves(ctx: FakeContext, players: Array<FakePlayer | undefined>): boolean {
  if (players.some((p) => p?.behaviour === 'hang')) {
    ctx.hang();
    return true;
  }
  if (players.some((p) => p?.behaviour === 'fail')) {
    officialError(ctx, 500, 'InternalServerError', 'Internal Server Error');
    return true;
  }
  return false;
}

function lookupName(ctx: FakeContext, notFound: () => void): void {
  const [name] = ctx.params;
  const player = ctx.state.players.byName('official', name);
  if (misbehaves(ctx, [player])) return;
  if (!player) return notFound();
  sendJson(ctx.res, 200, { id: player.uuid, name: player.name });
}

function bulk(ctx: FakeContext): void {
  if (!(ctx.req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
    return officialError(ctx, 415, 'UnsupportedMediaTypeException', 'Content type not supported');
  }
  const names = parseJson(ctx.body);
  if (!Array.isArray(names) || names.length < 1 || names.length > BULK_LIMIT || !names.every((n) => typeof n === 'string')) {
    return sendJson(ctx.res, 400, { error: 'CONSTRAINT_VIOLATION', errorMessage: 'getProfileName.profileNames: size must be between 1 and 10' });
  }
  const players = names.map((n) => ctx.state.players.byName('official', n));
  if (misbehaves(ctx, players)) return;
  const found = new Map(players.filter((p) => p !== undefined).map((p) => [p.uuid, { id: p.uuid, name: p.name }]));
  sendJson(ctx.res, 200, [...found.values()]);
}

async function profile(ctx: FakeContext): Promise<void> {
  const [raw] = ctx.params;
  const uuid = normalizeUuid(raw);
  if (!uuid) return sendJson(ctx.res, 400, { error: 'Bad Request', path: upstreamPath(ctx) });
  const player = ctx.state.players.byUuid('official', uuid);
  if (misbehaves(ctx, [player])) return;
  if (!player) return sendEmpty(ctx.res, 204);
  const key = ctx.url.searchParams.get('unsigned') === 'false' ? await signingKey('official') : null;
  sendJson(ctx.res, 200, await sessionProfile(player, ctx.state.baseUrl, key));
}

export const officialRoutes: FakeRoute[] = [
  {
    method: 'GET', pattern: /^\/official\/services\/minecraft\/profile\/lookup\/name\/([^/]+)$/, key: 'official.name',
    handler: (ctx) => lookupName(ctx, () => sendJson(ctx.res, 404, {
      path: upstreamPath(ctx), errorMessage: `Couldn't find any profile with name ${ctx.params[0]}`,
    })),
  },
  {
    // The legacy host's older behaviour: an unknown name is 204 with no body.
    method: 'GET', pattern: /^\/official\/api\/users\/profiles\/minecraft\/([^/]+)$/, key: 'official.legacyName',
    handler: (ctx) => lookupName(ctx, () => sendEmpty(ctx.res, 204)),
  },
  { method: 'POST', pattern: /^\/official\/services\/minecraft\/profile\/lookup\/bulk\/byname$/, key: 'official.bulk', handler: bulk },
  { method: 'GET', pattern: /^\/official\/session\/session\/minecraft\/profile\/([^/]+)$/, key: 'official.profile', handler: profile },
];
