// Every endpoint of the three services, described once: /openapi.json and /docs are generated
// from this list, so the documentation cannot drift from one page to the other.

export type ServiceId = 'skins' | 'media' | 'search';
export type Answer = 'envelope' | 'png' | 'html' | 'redirect' | 'file' | 'search' | 'json';

export interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  type: 'string' | 'integer' | 'number' | 'boolean';
  required?: boolean;
  default?: string | number;
  min?: number;
  max?: number;
  enum?: string[];
  description: string;
  example?: string;
}

export interface Endpoint {
  service: ServiceId;
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  summary: string;
  params?: Param[];
  /** JSON request body example (or "multipart" for uploads). */
  body?: string;
  answer: Answer;
  /** Extra error codes this endpoint can answer, beyond the common ones. */
  errors?: string[];
  auth?: 'session' | 'api-key' | 'admin' | 'media-password';
}

const name: Param = { name: 'name', in: 'path', type: 'string', required: true, description: 'player name or UUID (dashes optional)', example: 'SlimAlex' };
const source: Param = { name: 'source', in: 'query', type: 'string', enum: ['auto', 'official', 'external'], default: 'auto', description: 'which upstream answers' };
const pretty: Param = { name: 'pretty', in: 'query', type: 'string', enum: ['1', '0', 'false'], default: '1', description: 'indent the JSON' };
const size = (fallback: number): Param => ({ name: 'size', in: 'path', type: 'integer', required: true, min: 8, max: 512, default: fallback, description: 'pixels (also as ?size=)', example: String(fallback) });
const flag = (param: string, fallback: number, description: string): Param => ({ name: param, in: 'query', type: 'integer', enum: ['0', '1'], default: fallback, description });
const angle = (param: 'yaw' | 'pitch', fallback: number): Param => ({
  name: param, in: 'query', type: 'number', min: param === 'yaw' ? -180 : -90, max: param === 'yaw' ? 180 : 90, default: fallback,
  description: param === 'yaw' ? 'degrees; 0 = front, 180 = back' : 'degrees; positive looks down from above',
});
const bg: Param = { name: 'bg', in: 'query', type: 'string', description: 'background RRGGBB (default transparent)', example: '336699' };
const uuid: Param = { name: 'uuid', in: 'path', type: 'string', required: true, description: '32 hex digits, dashes optional' };
const apiKey: Param = { name: 'X-API-Key', in: 'header', type: 'string', required: true, description: 'search API key' };
const selector = (param: string, description: string): Param => ({ name: param, in: 'query', type: 'string', description, example: 'scenery' });

export const ENDPOINTS: Endpoint[] = [
  { service: 'skins', method: 'get', path: '/v1/player/{name}', summary: 'Full player record (also /v1/u/{uuid})', params: [name, source, pretty], answer: 'envelope', errors: ['invalid_name', 'invalid_uuid', 'bad_source', 'not_found', 'upstream_error', 'upstream_busy', 'upstream_timeout'] },
  { service: 'skins', method: 'get', path: '/v1/u/{name}', summary: 'Player record by UUID (same as /v1/player)', params: [name, source, pretty], answer: 'envelope' },
  { service: 'skins', method: 'get', path: '/v1/uuid/{name}', summary: 'Name to UUID record (cached 1 hour; `cached` says so)', params: [name, source, pretty], answer: 'envelope' },
  { service: 'skins', method: 'get', path: '/v1/profile/{uuid}', summary: 'Profile record', params: [uuid, source, pretty], answer: 'envelope' },
  { service: 'skins', method: 'get', path: '/v1/batch', summary: 'Batch lookup (comma-separated names)', params: [{ name: 'names', in: 'query', type: 'string', required: true, description: 'comma-separated, at most 100', example: 'SlimAlex,ClassicSteve' }, { name: 'type', in: 'query', type: 'string', description: '`profile` returns full records' }, source, pretty], answer: 'envelope', errors: ['too_many_names', 'missing_param'] },
  { service: 'skins', method: 'post', path: '/v1/batch', summary: 'Batch lookup (JSON body)', body: '{"names": ["SlimAlex"], "uuids": [], "type": "profile", "source": "auto"}', answer: 'envelope', errors: ['too_many_names', 'missing_param'] },
  { service: 'skins', method: 'get', path: '/v1/decode', summary: 'Decode a base64 textures value', params: [{ name: 'value', in: 'query', type: 'string', required: true, description: 'properties[].value' }, pretty], answer: 'envelope' },
  { service: 'skins', method: 'get', path: '/v1/status', summary: 'Service status (local state only, not rate limited)', params: [pretty], answer: 'envelope' },
  { service: 'skins', method: 'get', path: '/v1/sources', summary: 'Data sources', params: [pretty], answer: 'envelope' },
  { service: 'skins', method: 'get', path: '/v1/external/announcements', summary: 'External service announcements, HTML cleaned (also /v1/external/notice)', params: [{ name: 'fresh', in: 'query', type: 'integer', enum: ['0', '1'], default: 0, description: '1 skips the 10-minute cache' }, pretty], answer: 'envelope' },
  { service: 'skins', method: 'get', path: '/v1/external/meta', summary: 'External Yggdrasil metadata (also /v1/external/yggdrasil)', params: [pretty], answer: 'envelope' },
  { service: 'skins', method: 'get', path: '/v1/avatar/{name}/{size}', summary: '2D face with hat', params: [name, size(128), { name: 'shape', in: 'query', type: 'string', enum: ['square', 'circle'], default: 'square', description: 'shape' }, flag('helm', 1, '0 drops the hat'), bg, source], answer: 'png' },
  { service: 'skins', method: 'get', path: '/v1/head/{name}/{size}', summary: '3D head', params: [name, size(128), angle('yaw', 35), angle('pitch', 20), flag('helm', 1, '0 drops the hat'), bg, source], answer: 'png' },
  { service: 'skins', method: 'get', path: '/v1/body/{name}/{size}', summary: '2D full body (size wide, twice as tall)', params: [name, size(256), { name: 'view', in: 'query', type: 'string', enum: ['front', 'back'], default: 'front', description: 'side' }, flag('outer', 1, '0 hides the second layer'), bg, source], answer: 'png' },
  { service: 'skins', method: 'get', path: '/v1/render/{name}/{size}', summary: '3D render at any yaw and pitch', params: [name, size(256), angle('yaw', 0), angle('pitch', 0), flag('shadow', 1, 'shadow under the feet'), flag('outer', 1, 'second layer'), bg, { name: 'scale', in: 'query', type: 'number', min: 0.25, max: 4, description: 'zoom (default fits the figure)' }, source], answer: 'png' },
  { service: 'skins', method: 'post', path: '/v1/render/{size}', summary: 'Render an uploaded skin (multipart: file, model, yaw, pitch, …)', params: [size(256)], body: 'multipart', answer: 'png', errors: ['invalid_skin', 'payload_too_large', 'missing_param'] },
  { service: 'skins', method: 'get', path: '/v1/cube/{name}/{size}', summary: 'The head as a cube with its hat', params: [name, size(256), angle('yaw', 0), angle('pitch', 0), bg, source], answer: 'png' },
  { service: 'skins', method: 'get', path: '/v1/skin/{name}', summary: 'Raw skin PNG', params: [name, flag('download', 0, '1 adds download headers'), flag('upload', 1, '0 ignores an uploaded skin'), source], answer: 'png', errors: ['no_texture'] },
  { service: 'skins', method: 'get', path: '/v1/cape/{name}', summary: 'Raw cape PNG', params: [name, flag('download', 0, '1 adds download headers'), flag('upload', 1, '0 ignores an uploaded cape'), source], answer: 'png', errors: ['no_texture'] },
  { service: 'skins', method: 'get', path: '/oauth/external', summary: 'Start the login at the external service (302)', answer: 'redirect', errors: ['oauth_not_configured'] },
  { service: 'skins', method: 'get', path: '/oauth/external/callback', summary: 'Login callback (302 to /)', params: [{ name: 'code', in: 'query', type: 'string', required: true, description: 'from the authorisation page' }, { name: 'state', in: 'query', type: 'string', required: true, description: 'from the authorisation page' }], answer: 'redirect', errors: ['oauth_state_mismatch', 'oauth_denied', 'oauth_failed'] },
  { service: 'skins', method: 'get', path: '/oauth/logout', summary: 'End the session (302 to /)', answer: 'redirect' },
  { service: 'skins', method: 'get', path: '/v1/me', summary: 'Login state and user', params: [pretty], answer: 'envelope', auth: 'session' },
  { service: 'skins', method: 'get', path: '/v1/me/profiles', summary: "The account's players with UUIDs", params: [pretty], answer: 'envelope', auth: 'session' },
  { service: 'skins', method: 'get', path: '/v1/me/verification', summary: 'Premium verification (also /v1/me/premium)', params: [pretty], answer: 'envelope', auth: 'session', errors: ['not_logged_in', 'missing_scope'] },
  { service: 'skins', method: 'post', path: '/v1/me/token', summary: 'Yggdrasil game token for one of your profiles (equals a password)', body: '{"uuid": "<profile uuid>"}', answer: 'envelope', auth: 'session', errors: ['not_logged_in', 'missing_scope', 'forbidden', 'invalid_uuid'] },
  { service: 'skins', method: 'get', path: '/status', summary: 'Status page (HTML)', answer: 'html' },
  { service: 'skins', method: 'get', path: '/v1/status/probe', summary: 'Probe upstream connectivity (rate limited)', answer: 'envelope' },
  { service: 'skins', method: 'get', path: '/metrics', summary: 'Prometheus metrics (every service port)', answer: 'json' },
  { service: 'media', method: 'get', path: '/', summary: 'Random media by selector, or the landing page without one', params: [selector('img', 'random public image of a category'), selector('vid', 'random public video'), selector('sim', 'random private image (password)'), selector('smo', 'random private video (password)'), { name: 'orientation', in: 'query', type: 'string', enum: ['landscape', 'portrait'], description: 'filter' }, { name: 'format', in: 'query', type: 'string', enum: ['json'], description: 'JSON instead of the file' }, flag('redirect', 0, '302 to the permanent address')], answer: 'file', errors: ['category_not_found', 'empty_category', 'password_required', 'wrong_password'] },
  { service: 'media', method: 'get', path: '/f/{file}', summary: 'A file by its permanent address (immutable, ranges)', params: [{ name: 'file', in: 'path', type: 'string', required: true, description: '<id>.<ext>' }], answer: 'file' },
  { service: 'media', method: 'get', path: '/categories', summary: 'Public categories as JSON', answer: 'json' },
  { service: 'media', method: 'get', path: '/login', summary: 'Login form that mints embeddable tokens', answer: 'html', auth: 'media-password' },
  { service: 'search', method: 'get', path: '/v1/search', summary: 'Search (main pass and cross pass)', params: [{ name: 'query', in: 'query', type: 'string', required: true, description: 'the value to search', example: 'ada.example@example.org' }, { name: 'type', in: 'query', type: 'string', enum: ['auto', 'phone', 'email', 'messenger_user', 'network_user', 'social_id', 'fio', 'ip', 'domain', 'mac'], default: 'auto', description: 'query type' }, apiKey], answer: 'search', auth: 'api-key', errors: ['invalid_query', 'invalid_type', 'missing_key', 'invalid_key', 'key_disabled', 'key_expired', 'key_exhausted'] },
  { service: 'search', method: 'post', path: '/v1/search', summary: 'Search with a JSON body', params: [apiKey], body: '{"query": "ada.example@example.org", "type": "email"}', answer: 'search', auth: 'api-key' },
  { service: 'search', method: 'get', path: '/v1/types', summary: 'Query types with descriptions and examples', answer: 'json' },
  { service: 'search', method: 'get', path: '/health', summary: 'Status and version', answer: 'json' },
  { service: 'search', method: 'post', path: '/v1/admin/keys', summary: 'Create a key (shown once)', body: '{"name": "demo", "plan": "premium", "duration": "lifetime", "request_limit": null}', answer: 'json', auth: 'admin' },
  { service: 'search', method: 'get', path: '/v1/admin/keys', summary: 'List keys', answer: 'json', auth: 'admin' },
  { service: 'search', method: 'patch', path: '/v1/admin/keys/{id}', summary: 'Disable, limit or re-date a key', params: [{ name: 'id', in: 'path', type: 'string', required: true, description: 'key id' }], body: '{"disabled": true}', answer: 'json', auth: 'admin' },
  { service: 'search', method: 'delete', path: '/v1/admin/keys/{id}', summary: 'Delete a key', params: [{ name: 'id', in: 'path', type: 'string', required: true, description: 'key id' }], answer: 'json', auth: 'admin' },
];
