// The textures property: decoding, and downloading texture files only from allow-listed hosts.
import { ApiError } from '../../shared/errors.ts';
import { ownBytes } from '../../shared/own-bytes.ts';
import type { RawProfile, TexturesPayload } from './types.ts';
import type { UpstreamClient } from './upstream/client.ts';

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

export class TextureFetcher {
  private readonly client: UpstreamClient;
  private readonly allowedHosts: () => Promise<string[]>;
  private readonly maxBytes: number;

  constructor(client: UpstreamClient, allowedHosts: () => Promise<string[]>, maxBytes: number) {
    this.client = client;
    this.allowedHosts = allowedHosts;
    this.maxBytes = maxBytes;
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
    const response = await this.client.download(url.href, this.maxBytes);
    if (response.status !== 200) throw this.client.malformed(`texture status ${response.status}`);
    if (!response.body.subarray(0, 8).equals(PNG_SIGNATURE)) throw this.client.malformed('texture is not a PNG');
    return ownBytes(response.body);
  }
}
