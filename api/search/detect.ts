// Type detection for `type=auto` and for index fields without a telling name, and the one parser
// of a (query, type) pair every entry point uses. docs/search.md has the decision table.
import type { CountryCode } from 'libphonenumber-js';
import { ApiError } from '../../shared/errors.ts';
import { looksLikeUuid } from '../../shared/uuid.ts';
import { PREFIX_TYPES } from './lookup-keys.ts';
import { normalise, TELEGRAM_LINK } from './normalise.ts';
import { isSearchType, type SearchType, type TypedValue } from './types.ts';
import { normaliseDomain } from './values/domain.ts';
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
  if (query.includes('*')) return parsePattern(query.trim(), typeParam as SearchType | 'auto');
  if (typeParam === 'auto') {
    const detected = detect(query, { region });
    if (!detected) throw new ApiError('invalid_query', { detail: { zh: '没有类型与此值匹配', en: 'no type matches this value' } });
    return detected;
  }
  const value = normalise(typeParam, query, region);
  if (value === null) throw new ApiError('invalid_query', { detail: { zh: `不是有效的 ${typeParam}`, en: `not a valid ${typeParam}` } });
  return { type: typeParam, value };
}

/** The shortest prefix before a trailing `*`: shorter ones would match a good part of any index. */
const MIN_PREFIX = 3;

const patternError = (zh: string, en: string) => new ApiError('invalid_query', { detail: { zh: `query：${zh}`, en: `query: ${en}` } });
const PATTERN_FORMS = `the only patterns are *@domain (type email or auto) and a prefix of at least ${MIN_PREFIX} characters followed by one * (type network_user, messenger_user or fio)`;

/**
 * A prefix before a trailing `*` in the form its type's values are compared in (small letters,
 * a messenger name with its @, a name's words one space apart); null when no value could start so.
 */
function prefixValue(type: SearchType, text: string): string | null {
  if (type === 'messenger_user') {
    const name = text.replace(/^@/, '').toLowerCase();
    return name.length >= MIN_PREFIX && /^[a-z0-9_]{1,32}$/.test(name) ? `@${name}` : null;
  }
  if (type === 'fio') {
    const name = text.replace(/\s+/g, ' ').toLowerCase();
    return [...name].length >= MIN_PREFIX && /^\p{L}[\p{L}\p{M}'’. -]*$/u.test(name) ? name : null;
  }
  return [...text].length >= MIN_PREFIX && /^[\p{L}\p{N}_.-]{1,64}$/u.test(text) ? text.toLowerCase() : null;
}

/** A query with a `*`: `*@domain` or `prefix*`, or the 400 saying why not. */
function parsePattern(text: string, type: SearchType | 'auto'): TypedValue {
  if (text.indexOf('*') !== text.lastIndexOf('*')) throw patternError('只允许一个 *', `one * at most; ${PATTERN_FORMS}`);
  if (text.startsWith('*@')) {
    if (type !== 'email' && type !== 'auto') throw patternError(`类型 ${type} 没有模式`, `type ${type} takes no pattern; ${PATTERN_FORMS}`);
    const domain = normaliseDomain(text.slice(2));
    if (!domain) throw patternError('*@ 之后不是有效的域名', 'no valid domain after *@');
    return { type: 'email', value: domain, match: 'domain' };
  }
  if (!text.endsWith('*')) throw patternError('* 只能在末尾（前缀）或 *@domain 中', `a * only ends a prefix or opens *@domain; ${PATTERN_FORMS}`);
  if (type === 'auto') throw patternError('前缀查询需要指定类型', 'a prefix* needs its type (network_user, messenger_user or fio)');
  if (!PREFIX_TYPES.includes(type)) throw patternError(`类型 ${type} 没有前缀查询`, `type ${type} takes no prefix; ${PATTERN_FORMS}`);
  const value = prefixValue(type, text.slice(0, -1).trim());
  if (value === null) throw patternError(`* 之前至少需要 ${MIN_PREFIX} 个 ${type} 字符`, `a prefix needs at least ${MIN_PREFIX} characters a ${type} can hold before the *`);
  return { type, value, match: 'prefix' };
}

/** The region a phone query was read in when it carried no country code; null otherwise. */
export function assumedRegion(query: string, parsed: TypedValue, region: CountryCode): CountryCode | null {
  return parsed.type === 'phone' ? readPhone(query, region)?.assumedRegion ?? null : null;
}
