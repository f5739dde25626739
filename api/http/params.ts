// Request parameters as data: each one declares where it is, its JSON schema (type, default,
// range or enum) and its description. The same declaration is read strictly here and described
// in /openapi.json, so a default, a range or an allowed value is written once.
import type { Context } from 'koa';
import { ApiError, type ErrorCode } from '../../shared/errors.ts';
import type { Schema } from '../docs/openapi-types.ts';
import { queryParam } from './body.ts';

/** What the docs need to fill in examples that depend on the configuration. */
export interface DocContext { demoPlayer: string }
export type Example = string | number | ((docs: DocContext) => string | number);

export interface Param {
  name: string;
  /** `form`: a field of an upload form, read like a query parameter (the form's fields join the query). */
  in: 'path' | 'query' | 'form';
  description: string;
  schema: Schema;
  required: boolean;
  example?: Example;
  /** A reader of its own (an error code other than bad_request, a normalised value); else the schema's. */
  read?: (raw: string) => unknown;
  /** The error of a required parameter left out, when not missing_param. */
  missing?: ErrorCode;
  /** Still read, but described as deprecated: clients should stop sending it (an option an image kind does not use). */
  deprecated?: boolean;
}

/** The values read for a route: by name, defaults filled in, undefined when absent without one. */
export type Params = Readonly<Record<string, unknown>>;

// ---- declaring --------------------------------------------------------------------------------

type Extra = Pick<Param, 'example' | 'read' | 'missing'>;
export const inPath = (name: string, description: string, schema: Schema, extra: Extra = {}): Param =>
  ({ name, in: 'path', required: true, description, schema, ...extra });
export const inQuery = (name: string, description: string, schema: Schema, extra: Extra & { required?: boolean } = {}): Param =>
  ({ name, in: 'query', description, schema, ...extra, required: extra.required ?? false });
/** The same parameter as a field of an upload form. */
export const asFormField = (p: Param): Param => ({ ...p, in: 'form', required: false });

export const text: Schema = { type: 'string' };
export const choice = (values: readonly string[], fallback?: string): Schema =>
  ({ type: 'string', enum: [...values], ...(fallback !== undefined ? { default: fallback } : {}) });
export const between = (type: 'integer' | 'number', min: number, max: number, fallback?: number): Schema =>
  ({ type, minimum: min, maximum: max, ...(fallback !== undefined ? { default: fallback } : {}) });
/** A 0/1 switch (true/false also accepted); read as a boolean. */
export const flag = (name: string, fallback: 0 | 1, description: string): Param =>
  inQuery(name, `${description} (1/0, also true/false)`, { type: 'integer', enum: [0, 1], default: fallback });

// ---- reading ----------------------------------------------------------------------------------

/** Plain decimal numbers only: Number() would also take "0x40", "1e2", " 64" and "064". */
const INTEGER = /^-?(0|[1-9]\d*)$/;
const DECIMAL = /^-?(0|[1-9]\d*)(\.\d+)?$/;

const isFlag = (schema: Schema) => schema.type === 'integer' && Array.isArray(schema.enum) && schema.enum.join() === '0,1';

function bad(zh: string, en: string): ApiError {
  return new ApiError('bad_request', { detail: { zh, en } });
}

function readNumber(name: string, schema: Schema, raw: string): number {
  const integer = schema.type === 'integer';
  const { minimum: min = -Infinity, maximum: max = Infinity } = schema as { minimum?: number; maximum?: number };
  const value = Number(raw);
  if (!(integer ? INTEGER : DECIMAL).test(raw) || value < min || value > max) {
    throw bad(`${name} 必须是 ${min} 到 ${max} 之间的${integer ? '整数' : '数字'}`, `${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
  }
  return value;
}

/** One value by its schema: a 0/1 switch, a bounded plain decimal, one of an enum, or text (of at most maxLength). */
function readValue(p: Param, raw: string): unknown {
  if (p.read) return p.read(raw);
  const { schema, name } = p;
  if (isFlag(schema)) {
    if (raw === '1' || raw === 'true') return true;
    if (raw === '0' || raw === 'false') return false;
    throw bad(`${name} 只能是 1 或 0`, `${name} must be 1 or 0`);
  }
  if (schema.type === 'integer' || schema.type === 'number') return readNumber(name, schema, raw);
  const allowed = schema.enum as string[] | undefined;
  if (allowed && !allowed.includes(raw)) throw bad(`${name} 只能是 ${allowed.join(' 或 ')}`, `${name} must be ${allowed.join(' or ')}`);
  const maxLength = schema.maxLength as number | undefined;
  if (maxLength !== undefined && raw.length > maxLength) throw bad(`${name} 最多 ${maxLength} 个字符`, `${name} must be at most ${maxLength} characters`);
  return raw;
}

/** The default of a parameter that was not given (a switch's as a boolean). */
function fallback(p: Param): unknown {
  const value = p.schema.default;
  return isFlag(p.schema) && value !== undefined ? value === 1 : value;
}

/**
 * Reads every declared parameter strictly. "" counts as not given; a parameter of the path may
 * not also come in the query; a required one that is missing is missing_param. (A repeated
 * parameter was refused before any route: api/http/errors.ts.)
 */
export function readParams(ctx: Context, params: readonly Param[]): Params {
  const values: Record<string, unknown> = {};
  for (const p of params) {
    const inQuery = queryParam(ctx, p.name);
    if (p.in === 'path' && inQuery !== undefined) {
      throw bad(`${p.name} 只能在路径或查询参数中给出一次`, `${p.name} is given both in the path and in the query`);
    }
    const raw = p.in === 'path' ? (ctx.params as Record<string, string | undefined>)[p.name] : inQuery;
    if (raw === undefined || raw === '') {
      if (p.required) throw new ApiError(p.missing ?? 'missing_param', { detail: p.name });
      values[p.name] = fallback(p);
    } else {
      values[p.name] = readValue(p, raw);
    }
  }
  return values;
}
