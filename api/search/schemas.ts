// The component schemas of the search service's answers and bodies (api/docs/schemas.ts builds
// them), and its error body, which is not the envelope.
import { ERROR_CODES } from '../../shared/errors.ts';
import { array, bool, dateTime, int, map, nullable, num, object, oneOfValues, ref, str } from '../docs/schemas.ts';
import type { Schema } from '../docs/openapi-types.ts';
import { PLANS } from './keys/model.ts';
import { SEARCH_TYPES } from './types.ts';

/** A search error body whose `code` is one of `codes`. */
export function searchError(codes: readonly string[]): Schema {
  return { allOf: [ref('SearchError'), { properties: { error: { properties: { code: { enum: [...codes] } } } } }] };
}

const keyFields = {
  id: str(), name: str(), plan: oneOfValues(PLANS), created_at: dateTime, expires_at: nullable({ ...dateTime, description: 'null = lifetime' }),
  request_limit: nullable(int('null = unlimited')), used: int(), disabled: bool(), state: oneOfValues(['active', 'disabled', 'expired', 'exhausted']),
};
const success = { status: { const: 'success' } };

export const SEARCH_SCHEMAS: Record<string, Schema> = {
  SearchError: object({ status: { const: 'error' }, error: object({ code: oneOfValues(Object.keys(ERROR_CODES)), message: str() }) }),
  SearchRequest: object({ query: str(), type: oneOfValues(['auto', ...SEARCH_TYPES]) }, ['type']),
  SearchRecord: object({
    source: str(), kind: str('record, player or analysis'), ref: str(), fields: { type: 'object' },
    entities: array(object({ type: oneOfValues(SEARCH_TYPES), value: str() })),
  }),
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
    took_ms: num,
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
    }, ['plan', 'duration', 'expires_at', 'request_limit']),
    additionalProperties: false,
  },
  KeyPatch: {
    ...object({ disabled: bool(), request_limit: nullable({ type: 'integer', minimum: 1 }), expires_at: nullable(dateTime) }, ['disabled', 'request_limit', 'expires_at']),
    additionalProperties: false,
    minProperties: 1,
  },
};
