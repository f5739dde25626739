// JSON Schemas (2020-12, as OpenAPI 3.1 uses them) of every body the three services answer or
// accept. Enumerations come from the code that enforces them, so the description cannot drift.
import { ERROR_CODES } from '../../shared/errors.ts';
import { ORIENTATION_FILTERS } from '../media/orientation.ts';
import { PLANS } from '../search/keys/model.ts';
import { SEARCH_TYPES } from '../search/types.ts';
import { BATCH_LIMIT } from '../skins/batch.ts';
import { SOURCE_IDS } from '../skins/types.ts';

export type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const str = (description?: string): Schema => ({ type: 'string', ...(description ? { description } : {}) });
const int = (description?: string): Schema => ({ type: 'integer', ...(description ? { description } : {}) });
const bool = (description?: string): Schema => ({ type: 'boolean', ...(description ? { description } : {}) });
const num: Schema = { type: 'number' };
const uri: Schema = { type: 'string', format: 'uri' };
const dateTime: Schema = { type: 'string', format: 'date-time' };
const hex32: Schema = { type: 'string', pattern: '^[0-9a-f]{32}$', description: '32 hex digits, no dashes' };
const dashed: Schema = { type: 'string', format: 'uuid', description: '8-4-4-4-12 form' };
export const oneOfValues = (values: readonly string[], description?: string): Schema => ({ type: 'string', enum: [...values], ...(description ? { description } : {}) });
export const array = (items: Schema, extra: Schema = {}): Schema => ({ type: 'array', items, ...extra });
const map = (values: Schema): Schema => ({ type: 'object', additionalProperties: values });

/** Adds null to a schema: to `type` when it has one, else as an alternative. */
export function nullable(schema: Schema): Schema {
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  return { oneOf: [schema, { type: 'null' }] };
}

/** An object whose listed properties are all required unless named in `optional`. */
export function object(properties: Record<string, Schema>, optional: string[] = []): Schema {
  return { type: 'object', required: Object.keys(properties).filter((k) => !optional.includes(k)), properties };
}

/** The skins envelope around a given `data` schema. */
export function envelope(data: Schema): Schema {
  return { allOf: [ref('Envelope'), { properties: { data } }] };
}

/** An error body of the given shape whose `code` is one of `codes`. */
export function errorBody(shape: 'ErrorEnvelope' | 'SearchError', codes: string[]): Schema {
  const code = { enum: codes };
  return { allOf: [ref(shape), { properties: shape === 'ErrorEnvelope' ? { code } : { error: { properties: { code } } } }] };
}

export const SOURCE = oneOfValues(SOURCE_IDS, 'the source that answered');
/** Values of the `source` parameter of player lookups. */
export const PLAYER_SOURCES = ['auto', ...SOURCE_IDS];
const nameAndId = object({ id: hex32, name: str() });
const circuit = nullable(object({
  state: oneOfValues(['closed', 'open', 'half_open'], 'half_open: one probe call at a time'), retry_in_s: int(), strikes: int('throttle opens in a row'),
  failures: int('timeouts, failed connections and 5xx in a row'), reason: { type: ['string', 'null'], enum: ['upstream_busy', 'upstream_timeout', 'upstream_error', null], description: 'what opened it: the code refused lookups answer' },
}));

const profileFields = {
  uuid: hex32,
  uuid_dashed: dashed,
  name: str('player name'),
  source: SOURCE,
  skin_url: nullable({ ...uri, description: 'texture address; null without a custom skin' }),
  cape_url: nullable(uri),
  model: oneOfValues(['classic', 'slim']),
  profile: ref('Profile'),
  textures: ref('Textures'),
};
/** An image's ready-made addresses plus `sizeable`, the template with a literal {size}. */
const sized = (urls: string[], extra: Record<string, Schema> = {}) =>
  object({ ...Object.fromEntries(urls.map((u) => [u, uri])), sizeable: str('URL template with the literal placeholder {size}'), ...extra });

const SKINS: Record<string, Schema> = {
  Envelope: {
    type: 'object',
    description: 'Every JSON answer of the skins service. Decide success from `success`.',
    required: ['code', 'success', 'message', 'data', 'timestamp'],
    properties: { code: { const: 0 }, success: { const: true }, message: { const: 'ok' }, data: {}, timestamp: int('Unix time in seconds') },
  },
  ErrorEnvelope: {
    type: 'object',
    description: 'A failure of the skins or the media service; `message` is human-readable (Chinese from skins, English from media), `message_en` the skins explanation in English.',
    required: ['code', 'success', 'message', 'data', 'timestamp'],
    properties: { code: oneOfValues(Object.keys(ERROR_CODES)), success: { const: false }, message: str(), message_en: str('skins only: the message in English'), data: { type: 'null' }, timestamp: int('Unix time in seconds') },
  },
  UuidRecord: object({ id: hex32, dashed, name: str(), source: SOURCE, cached: bool('the answer came from the service cache') }),
  Profile: object({ id: hex32, name: str(), properties: array(object({ name: str('e.g. textures'), value: str('base64') })) }),
  DecodedTextures: object({
    timestamp: int('milliseconds'),
    profileId: str(),
    profileName: str(),
    signatureRequired: bool(),
    isPublic: bool(),
    textures: map(object({ url: uri, metadata: object({ model: oneOfValues(['slim']) }) }, ['metadata'])),
  }, ['timestamp', 'profileId', 'profileName', 'signatureRequired', 'isPublic']),
  Textures: object({ raw_value: nullable(str('base64 textures value')), raw_signature: nullable(str('base64 signature')), decoded: nullable(ref('DecodedTextures')) }),
  ProfileRecord: object(profileFields),
  ImageLinks: object({
    avatar: sized(['url_64', 'url_128', 'url_256']),
    head: sized(['url_128']),
    body: sized(['url']),
    render: sized(['url'], { options: { type: 'object', description: 'default and range of each render option' } }),
    cube: sized(['url']),
    skin: object({ url: uri, download: uri }),
    cape: object({ url: uri, download: uri }),
    isometric: uri,
  }),
  PlayerRecord: object({
    ...profileFields,
    model_label: str(),
    slim: bool(),
    has_skin: bool(),
    has_cape: bool(),
    skin_hash: nullable(str()),
    cape_hash: nullable(str()),
    default_skin: nullable(str('built-in skin the game shows for this UUID when there is no custom one')),
    textures_signed: bool(),
    textures_updated_at: nullable(int('milliseconds')),
    images: ref('ImageLinks'),
    queried_at: dateTime,
  }),
  BatchHit: object({ query: str('as asked'), id: hex32, dashed, name: str(), source: SOURCE }),
  BatchResult: object({
    // Exclusive branches: an entry with a profile is a whole profile record, one without is a hit.
    found: array({ oneOf: [{ allOf: [ref('BatchHit'), { properties: { profile: false } }] }, { allOf: [ref('BatchHit'), ref('ProfileRecord')] }] }, { description: 'full profile records with type=profile' }),
    missing: array(str(), { description: 'names and UUIDs resolved nowhere (invalid ones too)' }),
    source: oneOfValues(PLAYER_SOURCES),
    count: int(),
    errors: array(object({ source: SOURCE, code: str() }), { description: 'upstreams that failed during the batch' }),
  }, ['errors']),
  BatchRequest: {
    ...object({
      names: array(str(), { maxItems: BATCH_LIMIT }),
      uuids: array(str(), { maxItems: BATCH_LIMIT }),
      type: str('`profile` returns full profile records'),
      source: oneOfValues(PLAYER_SOURCES),
    }, ['names', 'uuids', 'type', 'source']),
    description: `names and/or uuids, at most ${BATCH_LIMIT} entries together`,
  },
  DecodeResult: object({ decoded: ref('DecodedTextures'), raw: str('the decoded text') }),
  SourceHealth: object({
    enabled: bool(), ok: bool(), calls: int(), errors: int(), consecutive_failures: int(),
    last_ok_at: nullable(dateTime), last_error_at: nullable(dateTime), last_error: nullable(str()),
    latency_ms: nullable(num), throttled: int('calls refused by the upstream budget'), circuit,
  }),
  Status: object({
    version: str(),
    uptime_ms: int(),
    cache: object({
      enabled: bool(), backend: oneOfValues(['memory', 'redis']), degraded: bool(), entries: int(), bytes: nullable(int()),
      hits: int(), misses: int(), stale: int(), errors: int(),
    }),
    sources: object(Object.fromEntries(SOURCE_IDS.map((id) => [id, ref('SourceHealth')]))),
    textures: ref('SourceHealth'),
    upstream_budgets: map(object({ remaining: int(), capacity: int(), per_second: num })),
    rate_limited: int('requests refused with 429 since start'),
    render: { type: 'object', description: 'render farm state; `workers: 0` when it is off' },
  }),
  Probe: map(object({ ok: bool(), ms: int(), error: nullable(str()) })),
  Sources: object({ sources: array(object({ id: SOURCE, label: str(), enabled: bool() })) }),
  Announcement: object({
    id: str(), title: str(), content: str('HTML cleaned to a tag whitelist'), color: str(), severity: str(),
    priority: int(), expand: bool(), timestamp: int('Unix seconds'), time_text: str(),
  }),
  Announcements: object({ source: str(), count: int(), announcements: array(ref('Announcement')) }),
  ExternalMeta: object({
    api_root: uri, auth_url: uri, session_url: uri, homepage: uri, register: uri,
    metadata: { type: 'object', description: 'the Yggdrasil metadata as served', properties: { meta: object({ serverName: str(), implementationName: str() }), skinDomains: array(str()) } },
  }),
  Me: object({ logged_in: bool(), user: object({ id: int(), name: str(), avatar: uri }) }, ['user']),
  MeProfiles: object({ logged_in: bool(), profiles: array(nameAndId) }),
  Verification: object({ verified: bool(), uuid: str('the verified official UUID, empty when not verified'), checked: bool(), logged_in: bool() }),
  GameToken: object({
    accessToken: str('equals a password: never share or store it'), clientToken: str(), selectedProfile: nullable(nameAndId),
    availableProfiles: array(nameAndId), created_at: dateTime, note: str(),
  }),
  TokenRequest: object({ uuid: str('one of your profiles (from /v1/me/profiles), dashes optional') }),
};

const MEDIA: Record<string, Schema> = {
  MediaItem: object({
    id: str(), alias: str(), category: str('display name'), file: str(), url: { ...uri, description: 'permanent address /f/<id>.<ext> (with ?token= for private files)' },
    type: oneOfValues(['image', 'video']), mime: str(), width: int(), height: int(),
    orientation: oneOfValues([...ORIENTATION_FILTERS, 'square']), bytes: int(), private: bool(),
  }),
  MediaCategories: object({
    categories: array(object({
      alias: str(), name: str(), private: bool(), files: int(), images: int(), videos: int(), landscape: int(), portrait: int(), square: int(),
    })),
    totals: object({ categories: int(), files: int(), calls: int('selector requests ever answered') }),
  }),
  MediaLogin: object({ password: str() }),
  MediaToken: object({ token: str('use as ?token= on private selectors and files'), expires_at: int('Unix seconds'), categories: array(str()) }),
  SkinsHealth: object({
    status: { const: 'ok' }, service: { const: 'skins' }, version: str(), uptime_s: int(),
    render: object({ workers: int('RENDER_WORKERS'), pages_alive: int('Chromium pages able to render') }),
  }),
  Readiness: object({
    status: { ...oneOfValues(['ready', 'degraded']), description: 'degraded: serving, with a dependency down or slow (see checks)' },
    service: oneOfValues(['skins', 'media', 'search']), version: str(),
    checks: array(object({
      name: str('redis, cache_redis, event_loop, render_farm, upstream_<source>, ...'), critical: bool('down here makes the instance not ready (503)'),
      status: oneOfValues(['ok', 'degraded', 'down']), detail: str(),
    }, ['detail'])),
  }),
  MediaHealth: object({ status: { const: 'ok' }, service: { const: 'media' }, version: str(), categories: int(), files: int() }),
};

const keyFields = {
  id: str(), name: str(), plan: oneOfValues(PLANS), created_at: dateTime, expires_at: nullable({ ...dateTime, description: 'null = lifetime' }),
  request_limit: nullable(int('null = unlimited')), used: int(), disabled: bool(), state: oneOfValues(['active', 'disabled', 'expired', 'exhausted']),
};
const success = { status: { const: 'success' } };

const SEARCH: Record<string, Schema> = {
  SearchError: object({ status: { const: 'error' }, error: object({ code: oneOfValues(Object.keys(ERROR_CODES)), message: str() }) }),
  SearchRequest: object({ query: str(), type: oneOfValues(['auto', ...SEARCH_TYPES]) }, ['type']),
  SearchRecord: object({
    source: str(), kind: str('record, player or analysis'), ref: str(), fields: { type: 'object' },
    entities: array(object({ type: oneOfValues(SEARCH_TYPES), value: str() })),
  }),
  SourceOutcome: object({
    outcome: oneOfValues(['completed', 'failed', 'timed_out', 'skipped']), duration_ms: num,
    records: int(), reason: str(), raw: { description: 'the source\'s raw answer' },
  }, ['records', 'reason', 'raw']),
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
  SearchHealth: object({
    status: { const: 'ok' }, version: str(), uptime_s: int(), key_store: oneOfValues(['redis', 'file']), admin_api: oneOfValues(['on', 'off']),
    timeout_ms: int(), index: nullable({ type: 'object', description: 'statistics of the SEARCH_DATA index' }),
    sources: array(object({ id: str(), description: str(), answers: array(str()), produces: array(str()), available: bool(), reason: nullable(str()) })),
  }),
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

export const SCHEMAS: Record<string, Schema> = { ...SKINS, ...MEDIA, ...SEARCH };

