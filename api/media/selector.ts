// The selection of GET /: which category, which kind of file, which orientation, and how to
// answer, from the parameters the route table read (orientation, format, redirect checked there).
import type { Context } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import type { Params } from '../http/params.ts';
import type { OrientationFilter } from './orientation.ts';
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

/** The selection, or null when the query names no selector (the landing page). */
export function parseSelection(ctx: Context, params: Params): Selection | null {
  // Given at all, even empty: `?img=` names a selector without its alias.
  const given = (Object.keys(SELECTORS) as SelectorName[]).filter((name) => ctx.query[name] !== undefined);
  if (given.length === 0) return null;
  if (given.length > 1) throw new ApiError('bad_request', { detail: { zh: `一次只能使用一个选择器（收到 ${given.join(', ')}）`, en: `use one selector at a time (got ${given.join(', ')})` } });
  const selector = given[0];
  const alias = params[selector] as string | undefined;
  if (!alias) throw new ApiError('bad_request', { detail: { zh: `${selector} 需要一个分类别名`, en: `${selector} needs a category alias` } });
  const answer = params.format === 'json' ? 'json' : params.redirect ? 'redirect' : 'file';
  return { selector, alias, ...SELECTORS[selector], orientation: params.orientation as OrientationFilter | undefined, answer };
}
