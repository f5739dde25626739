// JSON Schema (2020-12, as OpenAPI 3.1 uses it) builders for the bodies the services answer or
// accept, and the components every service's description shares: the envelope, its error form and
// readiness. Each service declares its own components beside its routes (api/<service>/schemas.ts)
// with these builders; enumerations come from the code that enforces them, so they cannot drift.
import { ERROR_CODES } from '../../shared/errors.ts';
import type { Schema } from './openapi-types.ts';

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const described = (schema: Schema, description?: string): Schema => ({ ...schema, ...(description ? { description } : {}) });
export const str = (description?: string): Schema => described({ type: 'string' }, description);
export const int = (description?: string): Schema => described({ type: 'integer' }, description);
export const bool = (description?: string): Schema => described({ type: 'boolean' }, description);
export const num: Schema = { type: 'number' };
export const uri: Schema = { type: 'string', format: 'uri' };
export const dateTime: Schema = { type: 'string', format: 'date-time' };
export const oneOfValues = (values: readonly string[], description?: string): Schema => described({ type: 'string', enum: [...values] }, description);
export const array = (items: Schema, extra: Schema = {}): Schema => ({ type: 'array', items, ...extra });
export const map = (values: Schema): Schema => ({ type: 'object', additionalProperties: values });

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

/** An error body of skins and media (the envelope) whose `code` is one of `codes`. */
export function envelopeError(codes: readonly string[]): Schema {
  return { allOf: [ref('ErrorEnvelope'), { properties: { code: { enum: [...codes] } } }] };
}

/** The components every service's description refers to. */
export const SHARED_SCHEMAS: Record<string, Schema> = {
  Envelope: {
    type: 'object',
    description: 'Every JSON answer of the skins service. Decide success from `success`.',
    required: ['code', 'success', 'message', 'data', 'timestamp'],
    properties: { code: { const: 0 }, success: { const: true }, message: { const: 'ok' }, data: {}, timestamp: int('Unix time in seconds') },
  },
  ErrorEnvelope: {
    type: 'object',
    description: 'A failure of the skins or the media service; `message` is human-readable (Chinese from skins, the contract; from media in the reader\'s language, named by Content-Language), `message_en` the skins explanation in English.',
    required: ['code', 'success', 'message', 'data', 'timestamp'],
    properties: { code: oneOfValues(Object.keys(ERROR_CODES)), success: { const: false }, message: str(), message_en: str('skins only: the message in English'), data: { type: 'null' }, timestamp: int('Unix time in seconds') },
  },
  Readiness: object({
    status: { ...oneOfValues(['ready', 'degraded']), description: 'degraded: serving, with a dependency down or slow (see checks)' },
    service: oneOfValues(['skins', 'media', 'search']), version: str(),
    checks: array(object({
      name: str('redis, cache_redis, event_loop, render_farm, upstream_<source>, ...'), critical: bool('down here makes the instance not ready (503)'),
      status: oneOfValues(['ok', 'degraded', 'down']), detail: str(),
    }, ['detail'])),
  }),
};
