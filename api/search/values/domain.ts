// Host names under a known public suffix; URLs are reduced to their host, IDNs to punycode.
import { domainToASCII } from 'node:url';
import { parse as parseHost } from 'tldts';

export interface HostParts { hostname: string; domain: string; suffix: string; subdomain: string; icann: boolean }

const MAX_NAME = 253;
/**
 * Longest host text that can become a name: punycode writes each letter as one or more (an astral
 * one is two code units here). Checked before any conversion, whose cost grows with the square of
 * a label's length (40 ms for one of 5,000 letters).
 */
const MAX_HOST_TEXT = 2 * MAX_NAME;

/** The host part of a URL: after the scheme, before its path, query or fragment (user and port included). */
const authority = (url: string) => url.slice(url.indexOf('://') + 3).split(/[/?#\\]/, 1)[0];

/** `trailingDot`: whether the root dot of a fully qualified name (example.org.) is taken. */
export function parseDomain(raw: string, options: { trailingDot?: boolean } = {}): HostParts | null {
  let text = raw.trim().toLowerCase();
  if (text.includes('://')) {
    if (authority(text).length > MAX_HOST_TEXT) return null;
    try {
      text = new URL(text).hostname;
    } catch {
      return null;
    }
  }
  if (options.trailingDot !== false) text = text.replace(/\.$/, '');
  if (text.length > MAX_HOST_TEXT) return null;
  // Only IDNs need the (native, comparatively slow) punycode conversion.
  if (/[^\x00-\x7f]/.test(text)) text = domainToASCII(text);
  if (!text || text.length > MAX_NAME) return null;
  const labels = text.split('.');
  if (labels.length < 2 || !labels.every((l) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l))) return null;
  const parts = parseHost(text);
  if (parts.isIp || !parts.domain || !parts.publicSuffix || !(parts.isIcann || parts.isPrivate)) return null;
  return { hostname: text, domain: parts.domain, suffix: parts.publicSuffix, subdomain: parts.subdomain ?? '', icann: !!parts.isIcann };
}

export function normaliseDomain(raw: string): string | null {
  return parseDomain(raw)?.hostname ?? null;
}
