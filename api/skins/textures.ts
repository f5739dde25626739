// The textures property: decoding, and downloading texture files only from allow-listed hosts.
import { isIP, type LookupFunction } from 'node:net';
import { ApiError } from '../../shared/errors.ts';
import { ownBytes } from '../../shared/own-bytes.ts';
import type { RawProfile, TexturesPayload } from './types.ts';
import type { UpstreamClient } from './upstream/client.ts';
import { publicOnlyLookup } from './upstream/public-lookup.ts';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export interface DecodedTextures { decoded: TexturesPayload; raw: string }

/** Decodes a base64 textures value; null when it is not base64 JSON of the right shape. */
export function decodeTexturesValue(value: string): DecodedTextures | null {
  const compact = value.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(compact)) return null;
  const raw = Buffer.from(compact, 'base64').toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const payload = parsed as TexturesPayload;
  // Blessing Skin writes an empty texture map as [] in some versions; treat both as "none".
  if (payload.textures === undefined || Array.isArray(payload.textures)) payload.textures = {};
  if (typeof payload.textures !== 'object' || payload.textures === null) return null;
  return { decoded: payload, raw };
}

export function texturesProperty(profile: RawProfile) {
  return profile.properties.find((p) => p.name === 'textures');
}

/** The content hash a texture is known by: the last path segment of its URL. */
export function textureHash(url: string): string {
  const segment = new URL(url).pathname.split('/').filter(Boolean).pop() ?? '';
  return segment.replace(/\.png$/i, '').toLowerCase();
}

/**
 * Allow-list rule: an entry "host" matches that host name on any port, "host:port" only that
 * port, ".example.org" any subdomain of example.org. Scheme must be http or https.
 */
export function hostAllowed(url: URL, allowed: readonly string[]): boolean {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (url.username || url.password) return false;
  const hostname = url.hostname.toLowerCase();
  const hostPort = `${hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
  return allowed.some((entry) => {
    const e = entry.toLowerCase();
    if (e.startsWith('.')) return hostname.endsWith(e) && hostname.length > e.length;
    return e.includes(':') ? e === hostPort : e === hostname;
  });
}

/**
 * Names that only ever mean this machine or a private network: loopback (`localhost`, RFC 6761),
 * multicast DNS (`.local`), the suffixes private networks use (`.internal`, `.lan`, `.home.arpa`…) and the
 * reserved ones that no public site has (`.test`, `.invalid`, `.example`).
 */
const PRIVATE_SUFFIXES = ['localhost', 'localdomain', 'local', 'internal', 'intranet', 'private', 'lan', 'home', 'corp', 'arpa', 'invalid', 'test', 'example'];
/** A host name as DNS writes it: labels of letters, digits and inner hyphens (IDNs as punycode). */
const DNS_NAME = /^(?!-)[a-z0-9-]{1,63}(?<!-)(?:\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/;

/**
 * An entry of the external site's `skinDomains` as an allow-list entry (`host` or `.suffix`,
 * lower case, punycode), or null when it could name an internal address: an IP literal in any
 * form (`127.0.0.1`, `[::1]`, `::1`, `2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`), a
 * single-label name (`intranet`, or `.cn`, which would allow a whole top-level domain), a
 * loopback or private name (`localhost`, `*.localhost`, `*.local`, `*.internal`…), or anything
 * that is no plain host name (a port, a path, user info). The site is an upstream, not ours: its
 * list widens where we download from only to public names (TEXTURE_HOSTS is the operator's).
 */
export function publicSkinDomain(entry: unknown): string | null {
  if (typeof entry !== 'string' || entry.length > 255) return null;
  const lower = entry.trim().toLowerCase();
  const suffix = lower.startsWith('.');
  const name = suffix ? lower.slice(1) : lower;
  if (!name || /[^\p{L}\p{N}.-]/u.test(name) || isIP(name)) return null;
  let hostname: string;
  try {
    // The URL parser reads every form of an IPv4 address (decimal, hex, octal, short), as the
    // texture URL itself would be read, and turns an IDN into punycode.
    hostname = new URL(`http://${name}/`).hostname;
  } catch {
    return null;
  }
  if (isIP(hostname) || hostname.startsWith('[') || !DNS_NAME.test(hostname)) return null;
  // A last label of digits (or 0x…) is an IPv4 address to the URL parser, never a name.
  if (/^(?:\d+|0x[0-9a-f]*)$/.test(hostname.slice(hostname.lastIndexOf('.') + 1))) return null;
  if (PRIVATE_SUFFIXES.some((s) => hostname === s || hostname.endsWith(`.${s}`))) return null;
  return suffix ? `.${hostname}` : hostname;
}

export class TextureFetcher {
  private readonly client: UpstreamClient;
  private readonly allowedHosts: () => Promise<string[]>;
  private readonly maxBytes: number;
  private readonly lookup: LookupFunction | undefined;

  /**
   * `publicOnly`: the allow-list came from an upstream (the external site's skinDomains), so a
   * name on it is connected to only at public addresses (publicSkinDomain checks the name, this
   * what it resolves to). The operator's TEXTURE_HOSTS may be internal.
   */
  constructor(client: UpstreamClient, allowedHosts: () => Promise<string[]>, maxBytes: number, publicOnly: boolean) {
    this.client = client;
    this.allowedHosts = allowedHosts;
    this.maxBytes = maxBytes;
    this.lookup = publicOnly ? publicOnlyLookup() : undefined;
  }

  /** Downloads a texture PNG; URLs on other hosts are refused without a request. */
  async fetch(textureUrl: string): Promise<Buffer> {
    let url: URL;
    try {
      url = new URL(textureUrl);
    } catch {
      throw new ApiError('upstream_error', { detail: { zh: '材质地址无效', en: 'the texture address is invalid' } });
    }
    if (!hostAllowed(url, await this.allowedHosts())) {
      throw new ApiError('upstream_error', { detail: { zh: `材质主机不在允许列表中: ${url.hostname}`, en: `the texture host is not allowed: ${url.hostname}` } });
    }
    // A 404 is the host's answer that no such file exists (a texture id anyone may type): no
    // fault of the host, so neither its health nor a 502.
    const response = await this.client.download(url.href, this.maxBytes, this.lookup, [404]);
    if (response.status === 404) throw new ApiError('no_texture', { detail: { zh: '材质主机没有这个文件', en: 'the texture host has no such file' } });
    if (response.status !== 200) throw this.client.malformed(`texture status ${response.status}`);
    if (!response.body.subarray(0, 8).equals(PNG_SIGNATURE)) throw this.client.malformed('texture is not a PNG');
    return ownBytes(response.body);
  }
}
