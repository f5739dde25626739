// One normaliser per query type: the canonical text of a value, or null when the value cannot be
// of that type. Canonical forms make a query and an indexed field meet on the same string.
// Phone numbers without a country code are read in a region (SEARCH_DEFAULT_REGION).
import type { CountryCode } from 'libphonenumber-js';
import { normalizeUuid } from '../../shared/uuid.ts';
import type { SearchType } from './types.ts';
import { normaliseDomain } from './values/domain.ts';
import { normaliseEmail } from './values/email.ts';
import { normaliseIp } from './values/ip.ts';
import { normaliseMac } from './values/mac.ts';
import { normaliseName } from './values/name.ts';
import { DEFAULT_REGION, readPhone } from './values/phone.ts';

function socialId(raw: string): string | null {
  const text = raw.trim();
  return /^\d{1,20}$/.test(text) ? text : null;
}

/** A Telegram profile link (t.me/name, https://telegram.me/s/name) names a messenger user. */
export const TELEGRAM_LINK = /^(?:https?:\/\/)?(?:www\.)?(?:t|telegram)\.me\/(?:s\/)?@?([a-z0-9_]{3,32})\/?$/i;

function messengerUser(raw: string): string | null {
  const text = raw.trim();
  const name = (TELEGRAM_LINK.exec(text)?.[1] ?? text.replace(/^@/, '')).toLowerCase();
  return /^[a-z0-9_]{3,32}$/.test(name) ? `@${name}` : null;
}

function networkUser(raw: string): string | null {
  const text = raw.trim();
  const uuid = normalizeUuid(text);
  if (uuid) return uuid;
  return /^[\p{L}\p{N}_.-]{1,64}$/u.test(text) ? text.toLowerCase() : null;
}

/** A SHA-256 digest: 64 hex digits, either case, answered in small letters. */
function sha256Digest(raw: string): string | null {
  const text = raw.trim();
  return /^[0-9a-f]{64}$/i.test(text) ? text.toLowerCase() : null;
}

const NORMALISERS: Record<SearchType, (raw: string, region: CountryCode) => string | null> = {
  phone: (raw, region) => readPhone(raw, region)?.phone.number ?? null,
  email: normaliseEmail,
  messenger_user: messengerUser,
  network_user: networkUser,
  social_id: socialId,
  fio: normaliseName,
  ip: normaliseIp,
  domain: normaliseDomain,
  mac: normaliseMac,
  email_sha256: sha256Digest,
  phone_sha256: sha256Digest,
};

export function normalise(type: SearchType, raw: string, region: CountryCode = DEFAULT_REGION): string | null {
  return NORMALISERS[type](raw, region);
}

/** Phone numbers a row typer remembers at most (about 100 bytes each); emptied when full, no bookkeeping per use. */
const PHONES_REMEMBERED = 100_000;
const phones = new Map<string, string | null>();

/**
 * normalise() for the values of data rows, phone numbers remembered: reading one (libphonenumber's
 * validation, 20-40 µs) is most of typing a row, and data files repeat numbers (shared lines, a
 * company's switchboard). Queries do not go through here, so a search instance remembers nothing.
 */
export function normaliseRowValue(type: SearchType, raw: string, region: CountryCode = DEFAULT_REGION): string | null {
  if (type !== 'phone') return normalise(type, raw, region);
  const key = `${region}${raw}`;
  let value = phones.get(key);
  if (value === undefined) {
    value = normalise(type, raw, region);
    if (phones.size >= PHONES_REMEMBERED) phones.clear();
    phones.set(key, value);
  }
  return value;
}
