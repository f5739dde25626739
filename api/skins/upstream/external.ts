// LittleSkin-style Blessing Skin server with a Yggdrasil API (external source).
import type { NameHit, RawProfile } from '../types.ts';
import type { UpstreamClient } from './client.ts';
import { bulkLookup, signedProfile } from './yggdrasil-calls.ts';

export const EXTERNAL_BULK_LIMIT = 5;

export interface ExternalUrls { url: string; yggdrasilUrl: string }

export interface YggdrasilMetadata {
  meta: { serverName?: string; implementationName?: string; implementationVersion?: string; links?: { homepage?: string; register?: string }; [key: string]: unknown };
  skinDomains: string[];
  signaturePublickey?: string;
}

export interface RawAnnouncement {
  id: string; title: string; content: string; color: string; severity: string; priority: number; expand: boolean; timestamp: number;
}

export class ExternalSource {
  readonly id = 'external' as const;
  readonly label = 'External accounts (Yggdrasil)';
  readonly client: UpstreamClient;
  readonly urls: ExternalUrls;

  constructor(urls: ExternalUrls, client: UpstreamClient) {
    this.urls = urls;
    this.client = client;
  }

  async nameToId(name: string): Promise<NameHit | null> {
    const hits = await this.namesToIds([name]);
    return hits.find((h) => h.name.toLowerCase() === name.toLowerCase()) ?? null;
  }

  /** Bulk lookup in chunks of the upstream's small limit (5 by default on Blessing Skin). */
  namesToIds(names: string[]): Promise<NameHit[]> {
    return bulkLookup(this.client, `${this.urls.yggdrasilUrl}/api/profiles/minecraft`, names, EXTERNAL_BULK_LIMIT, 'external');
  }

  profile(uuid: string): Promise<RawProfile | null> {
    return signedProfile(this.client, `${this.urls.yggdrasilUrl}/sessionserver/session/minecraft/profile/${uuid}`, 'external');
  }

  async metadata(): Promise<YggdrasilMetadata> {
    const response = await this.client.json<YggdrasilMetadata>(`${this.urls.yggdrasilUrl}/`);
    const body = response.body;
    if (!body || typeof body.meta !== 'object' || body.meta === null) throw this.client.malformed('metadata');
    return { ...body, skinDomains: Array.isArray(body.skinDomains) ? body.skinDomains.filter((d) => typeof d === 'string') : [] };
  }

  async announcements(): Promise<RawAnnouncement[]> {
    const response = await this.client.json<unknown>(`${this.urls.url}/api/announcements`);
    if (!Array.isArray(response.body)) throw this.client.malformed('announcements');
    return response.body.filter((a): a is RawAnnouncement => typeof a === 'object' && a !== null && typeof (a as RawAnnouncement).title === 'string');
  }
}
