// Mojang's public profile APIs (official source). Only the paths in docs/upstream.md.
import { ApiError } from '../../../shared/errors.ts';
import type { NameHit, RawProfile } from '../types.ts';
import { CircuitOpen } from './circuit.ts';
import type { UpstreamClient } from './client.ts';
import { parseNameHit } from './shapes.ts';
import { bulkLookup, signedProfile } from './yggdrasil-calls.ts';

export const OFFICIAL_BULK_LIMIT = 10;

export interface OfficialUrls { apiUrl: string; servicesUrl: string; sessionUrl: string }

export class OfficialSource {
  readonly id = 'official' as const;
  readonly label = 'Official accounts';
  readonly client: UpstreamClient;
  private readonly urls: OfficialUrls;

  constructor(urls: OfficialUrls, client: UpstreamClient) {
    this.urls = urls;
    this.client = client;
  }

  /** Name to UUID; null when the name does not exist. Falls back to the legacy host on failure. */
  async nameToId(name: string): Promise<NameHit | null> {
    const path = encodeURIComponent(name);
    try {
      return await this.single(`${this.urls.servicesUrl}/minecraft/profile/lookup/name/${path}`);
    } catch (error) {
      // Only a failing services host is worth the legacy one; a timeout, back-off or open circuit is not.
      if (!(error instanceof ApiError) || error.code !== 'upstream_error' || error instanceof CircuitOpen) throw error;
      return this.single(`${this.urls.apiUrl}/users/profiles/minecraft/${path}`);
    }
  }

  private async single(url: string): Promise<NameHit | null> {
    // 204 (older behaviour) and 404 (current) both mean "no such name".
    const response = await this.client.json<unknown>(url, { expect: [204, 404], family: 'official.names' });
    if (response.status === 204 || response.status === 404) return null;
    const hit = parseNameHit(response.body, 'official');
    if (!hit) throw this.client.malformed('name lookup');
    return hit;
  }

  /** Many names; the upstream takes 10 a call, so the list is split and sent in parallel. */
  namesToIds(names: string[]): Promise<NameHit[]> {
    return bulkLookup(this.client, `${this.urls.servicesUrl}/minecraft/profile/lookup/bulk/byname`, names, OFFICIAL_BULK_LIMIT, 'official');
  }

  /** Session profile with signed textures; null for an unknown UUID (204). */
  profile(uuid: string): Promise<RawProfile | null> {
    return signedProfile(this.client, `${this.urls.sessionUrl}/session/minecraft/profile/${uuid}`, 'official');
  }
}
