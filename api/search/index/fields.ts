// How a stored record becomes typed values: nested fields are flattened to dotted paths, a
// field's name picks its type when it tells one (phone, email, login...), and otherwise only
// values whose shape alone proves a type (an address, a +number) are taken.
import type { CountryCode } from 'libphonenumber-js';
import { detect } from '../detect.ts';
import { normaliseRowValue } from '../normalise.ts';
import { typedKey, type SearchType, type TypedValue } from '../types.ts';

const NAME_HINTS: Record<string, SearchType> = {
  phone: 'phone', phonenumber: 'phone', tel: 'phone', telephone: 'phone', mobile: 'phone', msisdn: 'phone', cell: 'phone',
  email: 'email', mail: 'email', emailaddress: 'email',
  messengeruser: 'messenger_user', messenger: 'messenger_user', telegram: 'messenger_user', tg: 'messenger_user',
  networkuser: 'network_user', username: 'network_user', user: 'network_user', login: 'network_user', nick: 'network_user', nickname: 'network_user', player: 'network_user', playername: 'network_user',
  socialid: 'social_id', userid: 'social_id', uid: 'social_id', accountid: 'social_id',
  fio: 'fio', fullname: 'fio', name: 'fio',
  ip: 'ip', ipaddress: 'ip', ipv4: 'ip', ipv6: 'ip', lastip: 'ip',
  domain: 'domain', host: 'domain', hostname: 'domain', website: 'domain', site: 'domain',
  mac: 'mac', macaddress: 'mac', bssid: 'mac',
};

/** Field paths whose type is remembered at most: a file's rows share a few dozen; emptied when full. */
const PATHS_REMEMBERED = 10_000;
const hints = new Map<string, SearchType | null>();

/** The type a field's name stands for ("Phone_Number", "emails", "contact.tel"), if any. */
export function hintedType(path: string): SearchType | null {
  let hint = hints.get(path);
  if (hint === undefined) {
    const last = path.slice(path.lastIndexOf('.') + 1).toLowerCase().replace(/[^a-z0-9]/g, '');
    hint = NAME_HINTS[last] ?? (last.endsWith('s') ? NAME_HINTS[last.slice(0, -1)] : undefined) ?? null;
    if (hints.size >= PATHS_REMEMBERED) hints.clear();
    hints.set(path, hint);
  }
  return hint;
}

const MAX_VALUE_LENGTH = 512;

/** Scalar leaves as [dotted path, text]; array items share their array's path. */
export function flatten(value: unknown, path = '', out: Array<[string, string]> = []): Array<[string, string]> {
  if (typeof value === 'string') {
    if (value && value.length <= MAX_VALUE_LENGTH) out.push([path, value]);
  } else if (typeof value === 'number' || typeof value === 'bigint') {
    out.push([path, String(value)]);
  } else if (Array.isArray(value)) {
    for (const item of value) flatten(item, path, out);
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) flatten(item, path ? `${path}.${key}` : key, out);
  }
  return out;
}

/** A value under a field whose name promises a type, but that is no value of any type. */
export interface RejectedValue { field: string; type: SearchType }

/** Every distinct typed value a record holds; `rejected` collects the unreadable named ones. */
export function typedValues(record: Record<string, unknown>, region?: CountryCode, rejected?: RejectedValue[]): TypedValue[] {
  const seen = new Map<string, TypedValue>();
  for (const [path, text] of flatten(record)) {
    const hint = hintedType(path);
    let typed: TypedValue | null = null;
    if (hint) {
      const value = normaliseRowValue(hint, text, region);
      if (value !== null) typed = { type: hint, value };
    }
    // A misfiled value (an e-mail under "phone") is still taken when its shape is unmistakable.
    typed ??= detect(text, { strongOnly: true, region });
    if (typed) seen.set(typedKey(typed), typed);
    else if (hint) rejected?.push({ field: path, type: hint });
  }
  return [...seen.values()];
}
