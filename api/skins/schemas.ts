// The component schemas of the skins service's answers and bodies (api/docs/schemas.ts builds them).
import { array, bool, dateTime, int, map, nullable, num, object, oneOfValues, ref, str, uri } from '../docs/schemas.ts';
import type { Schema } from '../docs/openapi-types.ts';
import { BATCH_LIMIT } from './batch.ts';
import { SOURCE_IDS } from './types.ts';

const hex32: Schema = { type: 'string', pattern: '^[0-9a-f]{32}$', description: '32 hex digits, no dashes' };
const dashed: Schema = { type: 'string', format: 'uuid', description: '8-4-4-4-12 form' };
const SOURCE = oneOfValues(SOURCE_IDS, 'the source that answered');
/** Values of the `source` parameter of player lookups. */
const PLAYER_SOURCES = ['auto', ...SOURCE_IDS];
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

export const SKINS_SCHEMAS: Record<string, Schema> = {
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
    bust: sized(['url']),
    turntable: sized(['url']),
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
    render: { type: 'object', description: 'render farm state; `workers: 0` when it is off. `state` ok, degraded or down (cannot draw: /ready answers 503), `detail`, `last_drawn_at`, `failed_in_a_row`, `last_error`, and counters since start. With RENDER_QUEUE_URL (render nodes) also `broker_connected`, `queue` (`name`, `depth`, `consumers`, `checked_at`), `pending` and `oldest_pending_ms` (jobs this instance waits for), `ignored_answers`, and `nodes`: each node\'s `id`, `host`, `pid`, `started`, `prefetch`, `info`, `stats`, `state`, `consuming`, `jobs` (`done`, `failed`, `expired`, `requeued`), `queue_wait_ms`, `seen_ms_ago`' },
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
  SkinsHealth: object({
    status: { const: 'ok' }, service: { const: 'skins' }, version: str(), uptime_s: int(),
    render: object({ workers: int('RENDER_WORKERS'), pages_alive: int('Chromium pages able to render') }),
  }),
};
