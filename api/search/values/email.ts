// E-mail addresses in the forms they are pasted in: bare, mailto: links, "Name <address>",
// quoted local parts and address literals (user@[192.0.2.1]). The value is the address alone.
import { parseDomain, type HostParts } from './domain.ts';
import { normaliseIp } from './ip.ts';

// RFC 5322 dot-atom and quoted-string local parts (printable ASCII, \-escapes inside quotes).
const DOT_ATOM = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const QUOTED = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*)"$/;
const DISPLAY_NAME = /^[^<>]*<([^<>]+)>$/;

export interface EmailParts {
  local: string;
  /** The host name, or null for an address literal. */
  host: HostParts | null;
  /** The address literal's IP ("192.0.2.1", "2001:db8::1"), or null for a host name. */
  literal: string | null;
  address: string;
}

/** The address out of its wrapping: mailto:addr?subject=..., "Name <addr>", <addr>. */
function unwrap(raw: string): string | null {
  let text = raw.trim();
  const named = DISPLAY_NAME.exec(text);
  if (named) text = named[1].trim();
  if (/^mailto:/i.test(text)) {
    text = text.slice(7).split('?')[0];
    try {
      text = decodeURIComponent(text);
    } catch {
      return null;
    }
  }
  return text;
}

function localPart(raw: string): string | null {
  if (DOT_ATOM.test(raw)) return raw;
  const quoted = QUOTED.exec(raw);
  if (!quoted) return null;
  // Quotes around what needs none ("ada"@...) are the same address as without them.
  const inner = quoted[1].replace(/\\(.)/g, '$1');
  return DOT_ATOM.test(inner) ? inner : raw;
}

/** The IP of an address literal: [192.0.2.1] or [IPv6:2001:db8::1], nothing else inside. */
function literal(raw: string): string | null {
  const match = /^\[(ipv6:)?([0-9a-f:.]+)\]$/.exec(raw);
  if (!match || (!match[1] && match[2].includes(':'))) return null;
  const ip = normaliseIp(match[2]);
  return ip && ip.includes(':') === !!match[1] ? ip : null;
}

export function parseEmail(raw: string): EmailParts | null {
  const text = unwrap(raw)?.toLowerCase();
  if (!text || text.length > 254) return null;
  const at = text.lastIndexOf('@');
  if (at < 1) return null;
  const local = localPart(text.slice(0, at));
  if (!local || local.length > 64) return null;
  const domainText = text.slice(at + 1);
  if (domainText.startsWith('[')) {
    const ip = literal(domainText);
    if (!ip) return null;
    return { local, host: null, literal: ip, address: `${local}@[${ip.includes(':') ? `IPv6:${ip}` : ip}]` };
  }
  // A root dot (user@example.org.) is not part of an address (RFC 5321).
  const host = parseDomain(domainText, { trailingDot: false });
  return host ? { local, host, literal: null, address: `${local}@${host.hostname}` } : null;
}

export function normaliseEmail(raw: string): string | null {
  return parseEmail(raw)?.address ?? null;
}
