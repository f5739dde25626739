// GET /v1/key: a key holder sees their own key — its state, uses, rate and what its plan allows —
// without counting a use. It counts in the address's search group (SEARCH_RATE_LIMIT), like a
// search, so asking it in a loop costs the asker, not the key.
import type { Context } from 'koa';
import type { Route } from '../http/route-table.ts';
import { json, pretty, requires } from '../docs/fragments.ts';
import { ref } from '../docs/schemas.ts';
import { keyAccepted, keyRate, SEARCH_GROUPS } from './auth.ts';
import { publicKey, usesLeft, type KeyRecord } from './keys/model.ts';
import { planFigures } from './plans.ts';
import type { SearchService } from './service.ts';

/** The key's record as keyAccepted read it, its figures and its rate this minute (read, not counted). */
async function keyInfo(ctx: Context, service: SearchService): Promise<void> {
  const record = ctx.state.searchKeyRecord as KeyRecord;
  const figures = planFigures(service.config, record);
  const rate = await service.limiter.check(keyRate(figures), record.id, Date.now(), 0);
  const { id, name, plan, state, created_at, expires_at, request_limit, used } = publicKey(record);
  ctx.set('Cache-Control', 'no-store');
  ctx.body = {
    status: 'success', id, name, plan, state, created_at, expires_at, request_limit, used, remaining: usesLeft(record),
    rate_limit: { limit: rate.limit, remaining: rate.remaining, reset: new Date(rate.resetAt).toISOString() },
    figures: { ...figures, export: figures.export_rows > 0 },
  };
}

export const KEY_ROUTES: Route<SearchService>[] = [
  {
    method: 'get', path: '/v1/key', params: [pretty], limit: SEARCH_GROUPS.search, before: (service) => [keyAccepted(service)], handle: keyInfo,
    doc: {
      summary: 'Your key: state, uses, rate and plan figures',
      description: 'Does not count a use. Refused as a search is (401 without a known key, 403 when it is disabled, expired or exhausted); counts in the address\'s search rate limit.',
      ok: json('the key as its holder sees it', ref('KeyInfo')),
      errors: ['missing_key', 'invalid_key', 'key_disabled', 'key_expired', 'key_exhausted', 'rate_limited'], security: requires('searchApiKey'),
    },
  },
];
