// The selection of GET /: which categories, which kind of file, which orientation, which filters,
// how many and how to answer, from the parameters the route table read (their ranges and allowed
// values checked there; what depends on more than one parameter, or on the client, here).
import type { Context } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { between, choice, inQuery, text, type Param, type Params } from '../http/params.ts';
import { MIME_TYPES } from './formats.ts';
import { ORIENTATION_FILTERS, orientationForClient, type OrientationFilter } from './orientation.ts';
import type { MediaFile, MediaType } from './types.ts';

export const SELECTORS = {
  img: { type: 'image', private: false },
  vid: { type: 'video', private: false },
  sim: { type: 'image', private: true },
  smo: { type: 'video', private: true },
} as const satisfies Record<string, { type: MediaType; private: boolean }>;

export type SelectorName = keyof typeof SELECTORS;

/** The selector value that means every category the selector may reach. */
export const ALL_CATEGORIES = 'all';
export const MAX_COUNT = 50;
const MAX_SEED = 256;
/** `type=`: a media type, `gif`, or a content type the library serves. */
const TYPE_FILTERS = ['image', 'video', 'gif', ...MIME_TYPES];

const bad = (zh: string, en: string) => new ApiError('bad_request', { detail: { zh, en } });

/** What a file must be to be picked, besides the selector's type and the orientation. */
export interface Filters {
  minWidth: number | undefined;
  minHeight: number | undefined;
  /** `image`, `video`, `gif` or a content type. */
  type: string | undefined;
  /** Moving (videos, animated images) or still; undefined: either. */
  animated: boolean | undefined;
  /** Ids never to answer. */
  exclude: string[];
}

export interface Selection {
  selector: SelectorName;
  /** The selector's value as given: one alias, a comma list, or `all`. */
  alias: string;
  /** The aliases named; null for every category the selector reaches (`all`). */
  aliases: string[] | null;
  type: MediaType;
  private: boolean;
  orientation: OrientationFilter | undefined;
  /** orientation=auto: the orientation was judged from the client, and any file may stand in. */
  orientationAuto: boolean;
  filters: Filters;
  /** How many distinct files (json and text answers only); undefined: one, answered as before. */
  count: number | undefined;
  seed: string | undefined;
  /** file: the bytes themselves; json: a description; text: the address; redirect: 302 to it. */
  answer: 'file' | 'json' | 'text' | 'redirect';
}

/** The parameters of GET / that narrow and shape a pick, besides the selectors and redirect. */
export const PICK_PARAMS: Param[] = [
  inQuery('orientation', 'media: only files of this orientation (square files match neither); auto: portrait for a phone '
    + '(Sec-CH-UA-Mobile, else the User-Agent), landscape otherwise, any file when the categories have none of it', choice([...ORIENTATION_FILTERS, 'auto'])),
  inQuery('format', 'media: json, a JSON description instead of the file; text, its address as one line of text/plain', choice(['json', 'text']), { example: 'json' }),
  inQuery('count', 'media, with format=json or text: this many distinct files (fewer when fewer match)', between('integer', 1, MAX_COUNT)),
  inQuery('exclude', 'media: file ids never to answer, comma separated', text),
  inQuery('seed', `media: the same files for the same seed while the categories are unchanged (at most ${MAX_SEED} characters)`, { type: 'string', maxLength: MAX_SEED }),
  inQuery('min_width', 'media: only files at least this wide (displayed pixels)', between('integer', 1, 1_000_000)),
  inQuery('min_height', 'media: only files at least this tall (displayed pixels)', between('integer', 1, 1_000_000)),
  inQuery('type', 'media: only files of this kind: image, video, gif, or a content type such as image/png', choice(TYPE_FILTERS)),
  inQuery('animated', 'media: 1, only files that move (videos, animated GIF, WebP, PNG, AVIF); 0, only still ones (1/0, also true/false)', { type: 'integer', enum: [0, 1] }),
];

/**
 * What a file must pass besides its pools (the selector's type, the orientation); undefined when
 * nothing narrows the pick, so that it need not read the pools whole.
 */
export function filterOf({ filters }: Selection): ((file: MediaFile) => boolean) | undefined {
  const { minWidth = 0, minHeight = 0, type, animated } = filters;
  if (!minWidth && !minHeight && type === undefined && animated === undefined && filters.exclude.length === 0) return undefined;
  const excluded = new Set(filters.exclude);
  return (file) => file.width >= minWidth && file.height >= minHeight && !excluded.has(file.id)
    && (animated === undefined || file.animated === animated)
    && (type === undefined || type === file.format.type || type === file.format.mime || type === file.format.container);
}

/** The aliases of a selector's value; null for `all`. */
function aliasesOf(selector: SelectorName, value: string): string[] | null {
  if (value === ALL_CATEGORIES) return null;
  const aliases = value.split(',');
  if (aliases.includes('')) throw bad(`${selector} 的分类列表中有空别名`, `${selector} has an empty alias in its list`);
  return [...new Set(aliases)];
}

/** The selection, or null when the query names no selector (the landing page). */
export function parseSelection(ctx: Context, params: Params): Selection | null {
  // Given at all, even empty: `?img=` names a selector without its alias.
  const given = (Object.keys(SELECTORS) as SelectorName[]).filter((name) => ctx.query[name] !== undefined);
  if (given.length === 0) return null;
  if (given.length > 1) throw bad(`一次只能使用一个选择器（收到 ${given.join(', ')}）`, `use one selector at a time (got ${given.join(', ')})`);
  const selector = given[0];
  const alias = params[selector] as string | undefined;
  if (!alias) throw bad(`${selector} 需要一个分类别名`, `${selector} needs a category alias`);
  const format = params.format as 'json' | 'text' | undefined;
  const answer = format ?? (params.redirect ? 'redirect' : 'file');
  const count = params.count as number | undefined;
  if (count !== undefined && answer !== 'json' && answer !== 'text') throw bad('count 需要 format=json 或 format=text', 'count needs format=json or format=text');
  const asked = params.orientation as OrientationFilter | 'auto' | undefined;
  const orientationAuto = asked === 'auto';
  return {
    selector, alias, aliases: aliasesOf(selector, alias), ...SELECTORS[selector],
    orientation: orientationAuto ? orientationForClient(ctx.get('Sec-CH-UA-Mobile'), ctx.get('User-Agent')) : asked,
    orientationAuto,
    filters: {
      minWidth: params.min_width as number | undefined,
      minHeight: params.min_height as number | undefined,
      type: params.type as string | undefined,
      animated: params.animated as boolean | undefined,
      exclude: (params.exclude as string | undefined)?.split(',').filter(Boolean) ?? [],
    },
    count, seed: params.seed as string | undefined, answer,
  };
}
