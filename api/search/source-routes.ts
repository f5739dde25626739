// GET /v1/search/sources: what a key's searches are answered from. The data sources (the operator's
// files grouped by the source name their sidecars give, with the rows indexed and the date of the
// data) and the live sources (game players, offline analysers) with the types they answer. Every
// key sees every source today. Like /v1/key it counts no use, only in the address's search group.
// Not /v1/sources: the skins service answers that path, and the one OpenAPI document describes a
// path once (two services may share it only under one description).
import type { Context } from 'koa';
import type { Route } from '../http/route-table.ts';
import { json, pretty, requires } from '../docs/fragments.ts';
import { ref } from '../docs/schemas.ts';
import { keyAccepted, SEARCH_GROUPS } from './auth.ts';
import type { DataSource } from './index/source-facts.ts';
import type { SearchService } from './service.ts';
import type { SearchSource } from './sources/source.ts';

/** A source answering from the operator's data files (both local_index backends). */
interface DataBackend { dataSources(): Promise<DataSource[]> }

const isDataBackend = (s: SearchSource): s is SearchSource & DataBackend => typeof (s as Partial<DataBackend>).dataSources === 'function';

async function listSources(ctx: Context, service: SearchService): Promise<void> {
  const data = service.sources.filter(isDataBackend);
  const live = service.sources.filter((s) => !isDataBackend(s));
  ctx.set('Cache-Control', 'no-store');
  ctx.body = {
    status: 'success',
    data_sources: (await Promise.all(data.map((s) => s.dataSources()))).flat(),
    live_sources: live.map((s) => ({ id: s.id, description: s.description, answers: [...s.answers] })),
  };
}

export const SOURCE_ROUTES: Route<SearchService>[] = [
  {
    method: 'get', path: '/v1/search/sources', params: [pretty], limit: SEARCH_GROUPS.search, before: (service) => [keyAccepted(service)], handle: listSources,
    doc: {
      summary: 'The sources your searches are answered from',
      description: 'Data sources: the operator\'s data files grouped by source name (from each file\'s `<file>.source.json` sidecar, else the file name), '
        + 'with the date of the data, whether it was verified, the kinds of data, the rows indexed and when its files were last indexed. '
        + 'Live sources: game players and offline analysers with the query types they answer. Every key sees every source. '
        + 'Does not count a use; refused as a search is (401, 403); counts in the address\'s search rate limit.',
      ok: json('the sources', ref('SourceList')),
      errors: ['missing_key', 'invalid_key', 'key_disabled', 'key_expired', 'key_exhausted', 'rate_limited'], security: requires('searchApiKey'),
    },
  },
];
