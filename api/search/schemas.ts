// The component schemas of the search service's answers and bodies (api/docs/schemas.ts builds
// them), and its error body, which is not the envelope.
import { ERROR_CODES } from '../../shared/errors.ts';
import { array, bool, dateTime, int, map, nullable, num, object, oneOfValues, ref, str } from '../docs/schemas.ts';
import type { Schema } from '../docs/openapi-types.ts';
import { PLANS } from './keys/model.ts';
import { FIGURE_BOUNDS, FIGURES } from './plans.ts';
import { SEARCH_TYPES } from './types.ts';
import { BULK_MAX } from './bulk.ts';
import { OFFSET_MAX, PAGE_ROWS_MAX, PAGE_TOTAL_CAP } from './paging.ts';

/** A search error body whose `code` is one of `codes`. */
export function searchError(codes: readonly string[]): Schema {
  return { allOf: [ref('SearchError'), { properties: { error: { properties: { code: { enum: [...codes] } } } } }] };
}

/** A key's own plan figures (api/search/plans.ts), as the admin API shows and takes them. */
const overrideFields = Object.fromEntries(FIGURES.map((f) => [f, nullable({ type: 'integer', minimum: FIGURE_BOUNDS[f].min, maximum: FIGURE_BOUNDS[f].max, description: 'the key\'s own figure; null = its plan\'s' })]));
const keyFields = {
  ...overrideFields,
  id: str(), name: str(), plan: oneOfValues(PLANS), created_at: dateTime, expires_at: nullable({ ...dateTime, description: 'null = lifetime' }),
  request_limit: nullable(int('null = unlimited')), used: int(), disabled: bool(), state: oneOfValues(['active', 'disabled', 'expired', 'exhausted']),
};
const success = { status: { const: 'success' } };

export const SEARCH_SCHEMAS: Record<string, Schema> = {
  SearchError: object({ status: { const: 'error' }, error: object({ code: oneOfValues(Object.keys(ERROR_CODES)), message: str() }) }),
  SearchRequest: object({
    query: str(), type: oneOfValues(['auto', ...SEARCH_TYPES]),
    limit: { type: 'integer', minimum: 1, maximum: PAGE_ROWS_MAX, description: 'local_index rows a page, at most the plan\'s page_rows' },
    offset: { type: 'integer', minimum: 0, maximum: OFFSET_MAX },
    cursor: str('page.next_cursor of the previous answer (not with offset)'),
    format: { ...oneOfValues(['json', 'csv', 'jsonl']), default: 'json' },
  }, ['type', 'limit', 'offset', 'cursor', 'format']),
  SearchPage: object({
    offset: int('rows of local_index passed over before this page'), limit: int(), returned: int('local_index rows on this page'),
    total: int(`rows matching in all, counted up to ${PAGE_TOTAL_CAP}`),
    total_capped: bool(`counting stopped at total: read "${PAGE_TOTAL_CAP}+"`),
    has_more: bool('another page follows'),
    next_cursor: nullable(str('the next page\'s cursor; null at the end (or past the furthest offset)')),
    data_changed: bool('the data was re-imported or rebuilt since the cursor was made (or while this page was read): rows may have moved between pages'),
  }),
  BulkRequest: object({
    queries: array(object({ query: str(), type: oneOfValues(['auto', ...SEARCH_TYPES]) }, ['type']), { minItems: 1, maxItems: BULK_MAX, description: 'at most the plan\'s bulk_size' }),
    cross: { type: 'boolean', default: true, description: 'false: no cross pass' },
    limit: { type: 'integer', minimum: 1, maximum: PAGE_ROWS_MAX, description: 'local_index rows each answer holds (its first page)' },
  }, ['cross', 'limit']),
  BulkResult: object({
    ...success, timed_out: bool('some query\'s answer timed out, or it had not started by the deadline'), count: int('queries answered'),
    results: array(ref('SearchResult'), { description: 'one a query, in the order asked' }), took_ms: num,
  }),
  SearchRecord: object({
    source: str(), kind: str('record, player or analysis'), ref: str(), fields: { type: 'object' },
    entities: array(object({ type: oneOfValues(SEARCH_TYPES), value: str() })),
    origin: object({ name: str('the data source (its sidecar\'s name, else the file name)'), date: nullable(str('YYYY, YYYY-MM or YYYY-MM-DD: when the data was taken')), verified: bool() }),
  }, ['origin']),
  SourceOutcome: object({
    outcome: oneOfValues(['completed', 'failed', 'timed_out', 'skipped']), duration_ms: num,
    records: int(), reason: str(), raw: { description: 'the upstream\'s reply (players); absent where the records are the answer (local_index, the analysers)' },
    total: int('matches in all, where more matched than were returned'),
    total_capped: { const: true, description: 'present when counting stopped at `total` (a database counts up to 1,000): read "1000+"' },
  }, ['records', 'reason', 'raw', 'total', 'total_capped']),
  SearchResult: object({
    ...success,
    timed_out: bool('the deadline passed; the answer holds what had arrived'),
    query: str('normalised'),
    search_type: oneOfValues(SEARCH_TYPES),
    count: int('records of the main pass'),
    parsed_count: int('count plus every cross-pass record'),
    entities_found: map(array(str())),
    cross_results: map({ type: 'object', description: 'per entity (type:value): its new records' }),
    smart_sections: { type: 'object', description: 'contacts, identity, accounts, network, players, analysis' },
    results: array(ref('SearchRecord')),
    aggregated: map(array({})),
    data: map(ref('SourceOutcome')),
    page: ref('SearchPage'),
    took_ms: num,
  }),
  SourceList: object({
    ...success,
    data_sources: array(object({
      name: str(), date: nullable(str('YYYY, YYYY-MM or YYYY-MM-DD')), verified: bool(), fields: array(str(), { description: 'kinds of data it holds' }),
      note: nullable(str()), rows: int('rows indexed'), files: int('data files'), updated_at: { ...dateTime, description: 'when its files were last indexed (built or imported)' },
    })),
    live_sources: array(object({ id: str(), description: str(), answers: array(oneOfValues(SEARCH_TYPES)) })),
  }),
  SearchTypes: object({ ...success, types: array(object({ type: oneOfValues(['auto', ...SEARCH_TYPES]), description: str(), example: str() })) }),
  // The operator (METRICS_TOKEN or SEARCH_ADMIN_TOKEN, or this machine) gets the detail; anyone
  // else the summary: status, version, uptime and counts.
  SearchHealth: object({
    status: { const: 'ok' }, version: str(), uptime_s: int(), key_store: oneOfValues(['redis', 'file']), admin_api: oneOfValues(['on', 'off']),
    timeout_ms: int(), index: nullable({ type: 'object', description: 'statistics of the SEARCH_DATA index (the operator sees each data file and its row problems; anyone else the counts)' }),
    sources: array(object({ id: str(), description: str(), answers: array(str()), produces: array(str()), available: bool(), reason: nullable(str()) })),
    sources_available: int(), sources_total: int(),
  }, ['key_store', 'admin_api', 'timeout_ms', 'sources', 'sources_available', 'sources_total']),
  ApiKey: object(keyFields),
  ApiKeyCreated: { allOf: [ref('ApiKey'), object({ ...success, key: str('shown only in this answer') })] },
  ApiKeyList: object({ ...success, keys: array(ref('ApiKey')) }),
  ApiKeyDeleted: object({ ...success, id: str(), deleted: { const: true } }),
  CreateKey: {
    ...object({
      name: { type: 'string', minLength: 1, maxLength: 100 },
      plan: { ...oneOfValues(PLANS), default: 'basic' },
      duration: { type: 'string', pattern: '^(lifetime|\\d{1,4}[hdwmy])$', description: 'e.g. 2m (months); or give expires_at' },
      expires_at: nullable(dateTime),
      request_limit: nullable({ type: 'integer', minimum: 1 }),
      ...overrideFields,
    }, ['plan', 'duration', 'expires_at', 'request_limit', ...FIGURES]),
    additionalProperties: false,
  },
  KeyInfo: object({
    ...success, id: str(), name: str(), plan: oneOfValues(PLANS), state: { const: 'active' }, created_at: dateTime, expires_at: nullable({ ...dateTime, description: 'null = lifetime' }),
    request_limit: nullable(int('null = unlimited')), used: int(), remaining: nullable(int('uses left; null = unlimited')),
    rate_limit: object({ limit: int('searches a minute (figures.searches_per_minute)'), remaining: int('left in this minute'), reset: { ...dateTime, description: 'when this minute\'s window ends' } }),
    figures: object({
      searches_per_minute: int(), page_rows: int('rows a page at most'), bulk_size: int('queries a bulk request at most (never above searches_per_minute)'), export_rows: int('rows an export at most; 0 = no export'),
      export: bool('export allowed (export_rows > 0)'),
    }),
  }),
  KeyPatch: {
    ...object({ disabled: bool(), plan: oneOfValues(PLANS), request_limit: nullable({ type: 'integer', minimum: 1 }), expires_at: nullable(dateTime), ...overrideFields }, ['disabled', 'plan', 'request_limit', 'expires_at', ...FIGURES]),
    additionalProperties: false,
    minProperties: 1,
  },
};
