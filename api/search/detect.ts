// Type detection for `type=auto` and for index fields without a telling name, and the one parser
// of a (query, type) pair every entry point uses. docs/search.md has the decision table.
import type { CountryCode } from 'libphonenumber-js';
import { ApiError } from '../../shared/errors.ts';
import { looksLikeUuid } from '../../shared/uuid.ts';
import { normalise, TELEGRAM_LINK } from './normalise.ts';
import { isSearchType, type SearchType, type TypedValue } from './types.ts';
import { EUI64_TEXT, SPACED_MAC_TEXT } from './values/mac.ts';
import { DEFAULT_REGION, looksLikeNationalPhone, readPhone } from './values/phone.ts';

interface Rule {
  type: SearchType;
  /**
   * Strong rules recognise a value by its shape alone (an @, dots and digits of an address);
   * weak ones (names, numbers) would claim any word, so unnamed index fields skip them.
   */
  strong: boolean;
  /** Whether `auto` should try this type for the text (normalise then decides). */
  applies(text: string): boolean;
}

// Order matters: each rule sees only what the rules before it declined.
const RULES: readonly Rule[] = [
  { type: 'messenger_user', strong: true, applies: (t) => (t.startsWith('@') && t.indexOf('@', 1) < 0) || TELEGRAM_LINK.test(t) },
  { type: 'phone', strong: true, applies: (t) => /^tel:/i.test(t) },
  { type: 'email', strong: true, applies: (t) => t.includes('@') },
  // Before ip: eight two-digit groups are also valid IPv6 text, but nobody writes IPv6 so.
  { type: 'mac', strong: true, applies: (t) => EUI64_TEXT.test(t) || SPACED_MAC_TEXT.test(t) },
  { type: 'ip', strong: true, applies: (t) => /^[\d.]+$/.test(t) || t.includes(':') || t.startsWith('[') },
  { type: 'network_user', strong: false, applies: looksLikeUuid },
  { type: 'mac', strong: true, applies: (t) => /[:.-]/.test(t) },
  // Twelve bare hex digits are a MAC only with a letter in them; all-digit ones are ids.
  { type: 'mac', strong: false, applies: (t) => /^[0-9a-f]{12}$/i.test(t) && /[a-f]/i.test(t) },
  { type: 'phone', strong: true, applies: (t) => t.startsWith('+') },
  { type: 'phone', strong: false, applies: (t) => looksLikeNationalPhone(t) || /^00\d+$/.test(t) },
  { type: 'social_id', strong: false, applies: (t) => /^\d+$/.test(t) },
  { type: 'domain', strong: true, applies: (t) => t.includes('.') },
  { type: 'fio', strong: false, applies: (t) => /\s/.test(t) || /^\p{Script=Han}+$/u.test(t) },
  // Digits and dots that are no address or number (256.0.0.0, 1.2.3) are nobody's user name.
  { type: 'network_user', strong: false, applies: (t) => !/^[\d.]+$/.test(t) },
];

export interface DetectOptions {
  /** Only the rules that need no field name (index fields without a telling name). */
  strongOnly?: boolean;
  /** Region of phone numbers written without a country code. */
  region?: CountryCode;
}

/** The first type whose rule takes the text and whose normaliser accepts it; null when none does. */
export function detect(raw: string, options: DetectOptions = {}): TypedValue | null {
  const text = raw.trim();
  if (!text) return null;
  for (const rule of RULES) {
    if (options.strongOnly && !rule.strong) continue;
    if (!rule.applies(text)) continue;
    const value = normalise(rule.type, text, options.region);
    if (value !== null) return { type: rule.type, value };
  }
  return null;
}

/** Validates a query and its type parameter (absent = auto); throws the API's 400 errors. */
export function parseQuery(query: unknown, type: unknown, region: CountryCode = DEFAULT_REGION): TypedValue {
  const typeParam = type === undefined || type === null || type === '' ? 'auto' : type;
  if (typeof typeParam !== 'string' || (typeParam !== 'auto' && !isSearchType(typeParam))) {
    throw new ApiError('invalid_type', { detail: { zh: `${String(typeParam).slice(0, 32)}（见 /v1/types）`, en: `${String(typeParam).slice(0, 32)} (see /v1/types)` } });
  }
  if (typeof query !== 'string' || !query.trim()) throw new ApiError('invalid_query', { detail: { zh: '查询为空', en: 'query is empty' } });
  if (query.length > 512) throw new ApiError('invalid_query', { detail: { zh: '查询超过 512 个字符', en: 'query is longer than 512 characters' } });
  if (typeParam === 'auto') {
    const detected = detect(query, { region });
    if (!detected) throw new ApiError('invalid_query', { detail: { zh: '没有类型与此值匹配', en: 'no type matches this value' } });
    return detected;
  }
  const value = normalise(typeParam, query, region);
  if (value === null) throw new ApiError('invalid_query', { detail: { zh: `不是有效的 ${typeParam}`, en: `not a valid ${typeParam}` } });
  return { type: typeParam, value };
}

/** The region a phone query was read in when it carried no country code; null otherwise. */
export function assumedRegion(query: string, parsed: TypedValue, region: CountryCode): CountryCode | null {
  return parsed.type === 'phone' ? readPhone(query, region)?.assumedRegion ?? null : null;
}
