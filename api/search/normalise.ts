// One normaliser per query type: the canonical text of a value, or null when the value cannot be
// of that type. Canonical forms make a query and an indexed field meet on the same string.
import { isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';
import { parsePhoneNumberFromString, type CountryCode, type PhoneNumber } from 'libphonenumber-js/max';
import { parse as parseHost } from 'tldts';
import { normalizeUuid } from '../../shared/uuid.ts';
import type { SearchType } from './types.ts';

/** National numbers (no + sign) are read in this region. */
export const DEFAULT_PHONE_REGION: CountryCode = 'US';

/** A valid phone number parsed with the full metadata (types and formats need it). */
export function parsePhone(raw: string): PhoneNumber | null {
  const text = raw.trim();
  if (!/^\+?[\d\s().-]{4,32}$/.test(text)) return null;
  const phone = parsePhoneNumberFromString(text, DEFAULT_PHONE_REGION);
  return phone?.isValid() ? phone : null;
}

function phone(raw: string): string | null {
  return parsePhone(raw)?.number ?? null;
}

export interface HostParts { hostname: string; domain: string; suffix: string; subdomain: string; icann: boolean }

/** A host name under a known public suffix (URLs are reduced to their host; IDNs to punycode). */
export function parseDomain(raw: string): HostParts | null {
  let text = raw.trim().toLowerCase();
  if (text.includes('://')) {
    try {
      text = new URL(text).hostname;
    } catch {
      return null;
    }
  }
  text = text.replace(/\.$/, '');
  // Only IDNs need the (native, comparatively slow) punycode conversion.
  if (/[^\x00-\x7f]/.test(text)) text = domainToASCII(text);
  if (!text || text.length > 253) return null;
  const labels = text.split('.');
  if (labels.length < 2 || !labels.every((l) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l))) return null;
  const parts = parseHost(text);
  if (parts.isIp || !parts.domain || !parts.publicSuffix || !(parts.isIcann || parts.isPrivate)) return null;
  return { hostname: text, domain: parts.domain, suffix: parts.publicSuffix, subdomain: parts.subdomain ?? '', icann: !!parts.isIcann };
}

function domain(raw: string): string | null {
  return parseDomain(raw)?.hostname ?? null;
}

// RFC 5322 dot-atom local part; quoted local parts are legal but never seen in practice.
const LOCAL_PART = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

function email(raw: string): string | null {
  const text = raw.trim().toLowerCase();
  const at = text.lastIndexOf('@');
  if (at < 1 || text.length > 254) return null;
  const local = text.slice(0, at);
  const host = parseDomain(text.slice(at + 1));
  if (local.length > 64 || !LOCAL_PART.test(local) || !host) return null;
  return `${local}@${host.hostname}`;
}

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const DOTTED_QUAD = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);

/**
 * Parses an IP address; IPv4-mapped IPv6 addresses become IPv4. Only dotted-quad IPv4 without
 * leading zeros is taken. The shape is checked first: ipaddr.js reports misfits by throwing,
 * which costs more than the whole parse when an index tries millions of values.
 */
export function parseIp(raw: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const text = raw.trim();
  if (DOTTED_QUAD.test(text)) return ipaddr.IPv4.parse(text);
  if (!isIPv6(text)) return null;
  const v6 = ipaddr.IPv6.parse(text);
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
}

function ip(raw: string): string | null {
  const parsed = parseIp(raw);
  if (!parsed) return null;
  return parsed.kind() === 'ipv6' ? (parsed as ipaddr.IPv6).toRFC5952String() : parsed.toString();
}

const MAC_FORMS = [
  /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/,
  /^[0-9a-f]{2}(-[0-9a-f]{2}){5}$/,
  /^[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}$/,
  /^[0-9a-f]{12}$/,
];

function mac(raw: string): string | null {
  const text = raw.trim().toLowerCase();
  if (!MAC_FORMS.some((form) => form.test(text))) return null;
  return text.replace(/[^0-9a-f]/g, '').match(/../g)!.join(':');
}

const NAME_WORD = {
  latin: /^\p{Script=Latin}+(?:['’-]\p{Script=Latin}+)*$/u,
  cyrillic: /^\p{Script=Cyrillic}+(?:['’-]\p{Script=Cyrillic}+)*$/u,
};

const titleCase = (word: string) => word.toLowerCase().replace(/(^|['’-])(\p{L})/gu, (_, sep: string, letter: string) => sep + letter.toUpperCase());

function fio(raw: string): string | null {
  const words = raw.trim().split(/\s+/);
  if (words.length < 2 || words.length > 3 || words.some((w) => w.length > 40)) return null;
  // One script for the whole name: a mix is a typo at best and a look-alike trick at worst.
  const script = Object.values(NAME_WORD).find((re) => words.every((w) => re.test(w)));
  return script ? words.map(titleCase).join(' ') : null;
}

function socialId(raw: string): string | null {
  const text = raw.trim();
  return /^\d{1,20}$/.test(text) ? text : null;
}

function messengerUser(raw: string): string | null {
  const text = raw.trim().replace(/^@/, '').toLowerCase();
  return /^[a-z0-9_]{3,32}$/.test(text) ? `@${text}` : null;
}

function networkUser(raw: string): string | null {
  const text = raw.trim();
  const uuid = normalizeUuid(text);
  if (uuid) return uuid;
  return /^[\p{L}\p{N}_.-]{1,64}$/u.test(text) ? text.toLowerCase() : null;
}

export const NORMALISERS: Record<SearchType, (raw: string) => string | null> = {
  phone,
  email,
  messenger_user: messengerUser,
  network_user: networkUser,
  social_id: socialId,
  fio,
  ip,
  domain,
  mac,
};

export function normalise(type: SearchType, raw: string): string | null {
  return NORMALISERS[type](raw);
}
