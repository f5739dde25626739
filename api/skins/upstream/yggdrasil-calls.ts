// The two calls both upstreams answer the same way (Mojang's API and Blessing Skin's Yggdrasil
// emulation): a bulk name lookup split into the upstream's chunk size, and a signed profile.
import type { NameHit, RawProfile, SourceId } from '../types.ts';
import type { UpstreamClient } from './client.ts';
import { parseNameHits, parseProfile } from './shapes.ts';

export async function bulkLookup(client: UpstreamClient, url: string, names: string[], chunkSize: number, source: SourceId): Promise<NameHit[]> {
  const chunks: string[][] = [];
  for (let i = 0; i < names.length; i += chunkSize) chunks.push(names.slice(i, i + chunkSize));
  const results = await Promise.all(chunks.map(async (chunk) => {
    const response = await client.json<unknown>(url, { method: 'POST', json: chunk, family: `${source}.names` });
    const hits = parseNameHits(response.body ?? [], source);
    if (!hits) throw client.malformed('bulk lookup');
    return hits;
  }));
  return results.flat();
}

/** A profile with signed properties; null for an unknown UUID (204, or 404 on some servers). */
export async function signedProfile(client: UpstreamClient, url: string, source: SourceId): Promise<RawProfile | null> {
  const response = await client.json<unknown>(url, { searchParams: { unsigned: 'false' }, expect: [204, 404], family: `${source}.profiles` });
  if (response.status !== 200 || response.body === undefined) return null;
  const profile = parseProfile(response.body, source);
  if (!profile) throw client.malformed('profile');
  return profile;
}
