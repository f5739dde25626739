// The language a request reads, for its pages and its errors alike: `?lang=en|zh` (a page
// remembers it in a `lang` cookie for a year), else that cookie, else Accept-Language; English
// when nothing names one of the two. The skins envelope is not translated (its `message` stays
// Chinese, the contract); media and search errors are written in this language.
import type { Context } from 'koa';
import type { Language } from '../../shared/errors.ts';

export type Lang = Language;

/** The value of `<html lang>` per language. */
export const HTML_LANG: Record<Lang, string> = { en: 'en', zh: 'zh-CN' };

const COOKIE = 'lang';
const COOKIE_MAX_AGE_MS = 365 * 24 * 3600 * 1000;
/** Bounds on the work one Accept-Language header may cause. */
const MAX_HEADER = 512;
const MAX_RANGES = 32;

/** `zh`, `zh-CN`, `zh-Hant-TW`, `EN-gb` → the language if it is one of ours; anything else null. */
function known(tag: unknown): Lang | null {
  if (typeof tag !== 'string') return null;
  const base = tag.trim().toLowerCase().split('-')[0];
  return base === 'en' || base === 'zh' ? base : null;
}

/** The most wanted of our languages in an Accept-Language header (q-values; the first wins a tie). */
export function preferredLanguage(header: string | undefined): Lang | null {
  if (!header) return null;
  let best: Lang | null = null;
  let bestQ = 0;
  for (const range of header.slice(0, MAX_HEADER).split(',').slice(0, MAX_RANGES)) {
    const [tag, ...params] = range.split(';');
    const lang = known(tag);
    if (!lang) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (weight > bestQ && weight <= 1) {
      best = lang;
      bestQ = weight;
    }
  }
  return best;
}

/** The language `?lang=` names, when it is one of ours. */
function asked(ctx: Context): Lang | null {
  const raw = ctx.query.lang;
  return known(Array.isArray(raw) ? raw[0] : raw);
}

/**
 * The language of the answer to this request, which says so (Content-Language) and varies with
 * both headers that choose it. Absent for a request Node refused before Koa: no header was read.
 */
export function requestLanguage(ctx?: Context): Lang {
  if (!ctx) return 'en';
  ctx.vary('Accept-Language');
  ctx.vary('Cookie');
  const lang = asked(ctx) ?? known(ctx.cookies.get(COOKIE, { signed: false })) ?? preferredLanguage(ctx.get('Accept-Language')) ?? 'en';
  ctx.set('Content-Language', HTML_LANG[lang]);
  return lang;
}

/** The page language: a valid `?lang=` is also stored in the cookie, so the switch's choice holds on the next page. */
export function pageLanguage(ctx: Context): Lang {
  const lang = requestLanguage(ctx);
  if (asked(ctx)) ctx.cookies.set(COOKIE, lang, { maxAge: COOKIE_MAX_AGE_MS, sameSite: 'lax', httpOnly: true, signed: false, overwrite: true });
  return lang;
}
