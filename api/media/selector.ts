// Reads and validates the selector query of GET /: which category, which kind of file, which
// orientation, and how to answer. Every mistake is a 400 that names the parameter.
import type { Context } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { ORIENTATION_FILTERS, type OrientationFilter } from './orientation.ts';
import type { MediaType } from './types.ts';

export const SELECTORS = {
  img: { type: 'image', private: false },
  vid: { type: 'video', private: false },
  sim: { type: 'image', private: true },
  smo: { type: 'video', private: true },
} as const satisfies Record<string, { type: MediaType; private: boolean }>;

export type SelectorName = keyof typeof SELECTORS;

export interface Selection {
  selector: SelectorName;
  alias: string;
  type: MediaType;
  private: boolean;
  orientation: OrientationFilter | undefined;
  /** file: the bytes themselves; json: a description; redirect: 302 to the permanent address. */
  answer: 'file' | 'json' | 'redirect';
}

function single(ctx: Context, name: string): string | undefined {
  const raw = ctx.query[name];
  if (Array.isArray(raw)) throw new ApiError('bad_request', { detail: `${name} may be given once` });
  return raw;
}

const quote = (value: string) => JSON.stringify(value.slice(0, 80));

/** The selection, or null when the query names no selector (the landing page). */
export function parseSelection(ctx: Context): Selection | null {
  const given = (Object.keys(SELECTORS) as SelectorName[]).filter((name) => ctx.query[name] !== undefined);
  if (given.length === 0) return null;
  if (given.length > 1) throw new ApiError('bad_request', { detail: `use one selector at a time (got ${given.join(', ')})` });
  const selector = given[0];
  const alias = single(ctx, selector) ?? '';
  if (!alias) throw new ApiError('bad_request', { detail: `${selector} needs a category alias` });

  const orientation = single(ctx, 'orientation');
  if (orientation !== undefined && !(ORIENTATION_FILTERS as readonly string[]).includes(orientation)) {
    throw new ApiError('bad_request', { detail: `orientation must be ${ORIENTATION_FILTERS.join(' or ')} (got ${quote(orientation)})` });
  }
  const format = single(ctx, 'format');
  if (format !== undefined && format !== 'json') throw new ApiError('bad_request', { detail: `format must be json, or left out for the file itself (got ${quote(format)})` });
  const redirect = single(ctx, 'redirect');
  if (redirect !== undefined && !['0', '1', 'true', 'false'].includes(redirect)) {
    throw new ApiError('bad_request', { detail: `redirect must be 1 or 0 (got ${quote(redirect)})` });
  }
  const answer = format === 'json' ? 'json' : redirect === '1' || redirect === 'true' ? 'redirect' : 'file';
  return { selector, alias, ...SELECTORS[selector], orientation: orientation as OrientationFilter | undefined, answer };
}
