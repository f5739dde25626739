// Pieces of the OpenAPI description that the route tables use: answers (JSON, envelope, PNG, HTML,
// redirect), the shared headers and security requirements, and the `pretty` switch every JSON
// route takes. Plain data, so a route table can import it without importing the document.
import { flag } from '../http/params.ts';
import type { Response, Schema, SecurityRequirement } from './openapi-types.ts';
import { envelope, ref } from './schemas.ts';

const text: Schema = { type: 'string' };
const header = (description: string, schema: Schema = text) => ({ description, schema });
export const HEADERS = {
  'X-RateLimit-Limit': header('quota of this endpoint\'s group per 60 s window', { type: 'integer' }),
  'X-RateLimit-Remaining': header('requests left in this window', { type: 'integer' }),
  'X-RateLimit-Reset': header('Unix time when the window ends', { type: 'integer' }),
  'Retry-After': header('seconds to wait', { type: 'integer' }),
  ETag: header('from the texture hash and the normalised options (If-None-Match answers 304)'),
  'X-Cache': header('HIT, MISS or STALE', { type: 'string', enum: ['HIT', 'MISS', 'STALE'] }),
  Location: header('where to go'),
  Allow: header('the methods this path answers'),
  'Content-Range': header('bytes first-last/size of a 206; bytes */size of a 416'),
  'Access-Control-Allow-Methods': header('the methods the path answers (on a path the service does not answer: every method it answers anywhere)'),
  Vary: header('`Accept` when the format was chosen by the Accept header (IMAGE_FORMAT_FROM_ACCEPT)'),
};
/** References to shared headers (components.headers), keyed by name as responses list them. */
export const headers = (...names: Array<keyof typeof HEADERS>) => Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));

export function json(description: string, schema: Schema): Response {
  return { description, content: { 'application/json': { schema } } };
}
/** The skins envelope with `data` of the named component schema. */
export const data = (description: string, name: string) => json(`${description} (envelope, data: ${name})`, envelope(ref(name)));
const binary = (type: string) => ({ schema: { type: 'string', contentMediaType: type } });
export const png = (description: string): Response => ({ description, headers: headers('ETag', 'X-Cache'), content: { 'image/png': binary('image/png') } });
/** A drawn image, in the format the request chose (api/skins/image-format.ts). */
export const images = (description: string): Response =>
  ({ description, headers: headers('ETag', 'X-Cache', 'Vary'), content: Object.fromEntries(['image/png', 'image/webp', 'image/avif'].map((type) => [type, binary(type)])) });
export const HTML = { schema: text };
export const html = (description: string): Response => ({ description, content: { 'text/html': HTML } });
export const redirect = (description: string): Response => ({ description, headers: headers('Location') });
export const octets = (description: string, more: Partial<Response> = {}): Response =>
  ({ description, ...more, content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } });

/** Security requirements by scheme name (components.securitySchemes); '' makes credentials optional. */
export const requires = (...schemes: string[]): SecurityRequirement[] => schemes.map((s) => (s ? { [s]: [] } : {}));

/** Read by the JSON serialiser of every service (api/http/envelope.ts). */
export const pretty = flag('pretty', 1, 'indented JSON; 0 gives compact output');
/**
 * The same switch, compact unless asked: for routes whose callers are programs (the search API,
 * where every caller holds a key) and whose answers are large (36-130 KB a search indented,
 * which cost a fifth of the searches a core answers).
 */
export const prettyOnRequest = flag('pretty', 0, 'compact JSON; 1 indents it');
