// The language of an HTML page: `?lang=en|zh` (remembered in a `lang` cookie for a year), else
// that cookie, else Accept-Language; English when nothing names one of the two. JSON answers are
// not translated here: the envelope's `message` stays Chinese (the contract).
import type { Context } from 'koa';

export type Lang = 'en' | 'zh';

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

/**
 * The page language for this request. A valid `?lang=` is also stored in the cookie, so the
 * choice made with the switch holds on the next page; the answer varies with both headers.
 */
export function pageLanguage(ctx: Context): Lang {
  ctx.vary('Accept-Language');
  ctx.vary('Cookie');
  const raw = ctx.query.lang;
  const asked = known(Array.isArray(raw) ? raw[0] : raw);
  if (asked) ctx.cookies.set(COOKIE, asked, { maxAge: COOKIE_MAX_AGE_MS, sameSite: 'lax', httpOnly: true, signed: false, overwrite: true });
  const lang = asked ?? known(ctx.cookies.get(COOKIE, { signed: false })) ?? preferredLanguage(ctx.get('Accept-Language')) ?? 'en';
  ctx.set('Content-Language', HTML_LANG[lang]);
  return lang;
}

