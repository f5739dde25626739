// IP addresses as they appear in logs and configs: bare, in brackets, with a port, with an IPv6
// zone id. The address alone is the value: a port is a service on it, and a zone id (fe80::1%eth0)
// only names the interface on the machine that wrote it.
import { isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const DOTTED_QUAD = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);
const PORT = '(?::\\d{1,5})?';
const V4_WITH_PORT = new RegExp(`^(${OCTET}(?:\\.${OCTET}){3})${PORT}$`);
const BRACKETED = new RegExp(`^\\[([^\\]]+)\\]${PORT}$`);
const EMBEDDED_V4 = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/;

/** The address part of the text: brackets, port and zone id taken off; null when none fits. */
function addressText(raw: string): string | null {
  const text = raw.trim();
  const v4 = V4_WITH_PORT.exec(text);
  if (v4) return v4[1];
  const inner = BRACKETED.exec(text)?.[1] ?? text;
  const zone = inner.indexOf('%');
  if (zone < 0) return inner;
  return zone < inner.length - 1 ? inner.slice(0, zone) : null;
}

/**
 * Parses an IP address; IPv4-mapped IPv6 addresses become IPv4. Only dotted-quad IPv4 without
 * leading zeros is taken. The shape is checked first: ipaddr.js reports misfits by throwing,
 * which costs more than the whole parse when an index tries millions of values.
 */
export function parseIp(raw: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const text = addressText(raw);
  if (text === null) return null;
  if (DOTTED_QUAD.test(text)) return ipaddr.IPv4.parse(text);
  if (!isIPv6(text)) return null;
  // ipaddr.js reads "::a.b.c.d" as IPv4-mapped; written out in hex it reads it as it reads the
  // long form (0:0:0:0:0:0:a.b.c.d), so both come out as the same IPv4-compatible address.
  const embedded = EMBEDDED_V4.exec(text);
  let hex = text;
  if (embedded) {
    if (!isIPv4(embedded[2])) return null;
    const [a, b, c, d] = embedded[2].split('.').map(Number);
    hex = `${embedded[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const v6 = ipaddr.IPv6.parse(hex);
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
}

export function normaliseIp(raw: string): string | null {
  const parsed = parseIp(raw);
  if (!parsed) return null;
  return parsed.kind() === 'ipv6' ? (parsed as ipaddr.IPv6).toRFC5952String() : parsed.toString();
}
