// Who the client is behind proxies (TRUST_PROXY). The client is the address just left of the last
// trusted hop in X-Forwarded-For: proxies append what they saw, so everything further left was
// written by the client and is never believed.
import ipaddr from 'ipaddr.js';
import type { Context } from 'koa';
import { LruMap } from '../../shared/lru-map.ts';

export type TrustProxy =
  | { mode: 'none' }
  /** Every hop (the left-most address): safe only when the proxy overwrites the header. */
  | { mode: 'all' }
  /** This many proxies in front of us, each appending one address. */
  | { mode: 'hops'; hops: number }
  /** Peers in these ranges are proxies. */
  | { mode: 'ranges'; ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> };

/** Parses TRUST_PROXY: false, true, a hop count, or a comma list of addresses/CIDRs. Throws a readable message. */
export function parseTrustProxy(raw: string | undefined): TrustProxy {
  const text = (raw ?? '').trim().toLowerCase();
  if (text === '' || text === 'false' || text === '0') return { mode: 'none' };
  if (text === 'true') return { mode: 'all' };
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops > 32) throw new Error(`a hop count is at most 32 (got "${raw}")`);
    return { mode: 'hops', hops };
  }
  const ranges = text.split(',').map((entry) => entry.trim()).filter(Boolean).map((entry) => {
    try {
      if (entry.includes('/')) return ipaddr.parseCIDR(entry);
      const address = ipaddr.parse(entry);
      return [address, address.kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number];
    } catch {
      throw new Error(`"${entry}" is not an address or CIDR range`);
    }
  });
  return { mode: 'ranges', ranges };
}

/** An address as one spelling (IPv4-mapped IPv6 as IPv4), or null when it is none. */
function normalise(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bare = text.trim().replace(/^\[([^\]]+)\](:\d+)?$/, '$1').replace(/^(\d+\.\d+\.\d+\.\d+):\d+$/, '$1');
  if (!ipaddr.isValid(bare)) return null;
  try {
    return ipaddr.process(bare);
  } catch {
    return null;
  }
}

function inRanges(address: ipaddr.IPv4 | ipaddr.IPv6, ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>): boolean {
  return ranges.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits));
}

/** Whether the peer that sent this request is a proxy we trust (its X-Forwarded-* count). */
export function peerTrusted(trust: TrustProxy, peer: string): boolean {
  if (trust.mode === 'none') return false;
  if (trust.mode !== 'ranges') return true;
  const address = normalise(peer);
  return address !== null && inRanges(address, trust.ranges);
}

/** Dotted IPv4 without leading zeros: already its own one spelling, no parsing needed. */
const PLAIN_IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** Peers are few (the proxies): their spelling is remembered. */
const peers = new LruMap<string>(1024);

/** normalise() as text, or null. */
function canonical(text: string): string | null {
  const trimmed = text.trim();
  return PLAIN_IPV4.test(trimmed) ? trimmed : normalise(trimmed)?.toString() ?? null;
}

/** The client's address for this peer and X-Forwarded-For value. */
export function clientAddress(trust: TrustProxy, peer: string, forwardedFor: string | undefined): string {
  let peerAddress = peers.get(peer);
  if (peerAddress === undefined) {
    peerAddress = canonical(peer) ?? peer;
    peers.set(peer, peerAddress);
  }
  if (trust.mode === 'none' || !forwardedFor || !peerTrusted(trust, peer)) return peerAddress;
  // Right to left: the peer, then what each trusted hop reported; only as far as needed.
  const hops = forwardedFor.split(',');
  let client = peerAddress;
  for (let i = 0; i < hops.length; i += 1) {
    const text = hops[hops.length - 1 - i];
    if (trust.mode === 'ranges') {
      const address = normalise(text);
      // A value no proxy would write: the hop that passed it on is as far as we can see.
      if (!address) break;
      client = address.toString();
      if (!inRanges(address, trust.ranges)) break;
      continue;
    }
    const address = canonical(text);
    if (address === null) break;
    client = address;
    if (trust.mode === 'hops' && i + 1 >= trust.hops) break;
  }
  return client;
}

/**
 * The origin a request arrived at, for building absolute addresses: X-Forwarded-Proto (http or
 * https only) and X-Forwarded-Host (a plain host[:port]) count only from a trusted proxy.
 */
export function requestOrigin(ctx: Context, trusted: boolean): string {
  const first = (name: string) => ctx.get(name).split(',')[0].trim();
  const proto = trusted ? first('X-Forwarded-Proto').toLowerCase() : '';
  const host = trusted ? first('X-Forwarded-Host') : '';
  const protocol = proto === 'http' || proto === 'https' ? proto : ctx.protocol;
  const validHost = (value: string) => /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/.test(value);
  return `${protocol}://${validHost(host) ? host : validHost(ctx.get('Host')) ? ctx.get('Host') : 'localhost'}`;
}
