// Shape checks for upstream answers: anything that does not match is a malformed answer.
import { normalizeUuid } from '../../../shared/uuid.ts';
import type { NameHit, ProfileProperty, RawProfile, SourceId } from '../types.ts';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function parseNameHit(value: unknown, source: SourceId): NameHit | null {
  if (!isObject(value) || typeof value.id !== 'string' || typeof value.name !== 'string') return null;
  const id = normalizeUuid(value.id);
  return id ? { id, name: value.name, source } : null;
}

export function parseNameHits(value: unknown, source: SourceId): NameHit[] | null {
  if (!Array.isArray(value)) return null;
  const hits = value.map((v) => parseNameHit(v, source));
  return hits.every((h) => h !== null) ? (hits as NameHit[]) : null;
}

export function parseProfile(value: unknown, source: SourceId): RawProfile | null {
  const hit = parseNameHit(value, source);
  if (!hit || !isObject(value)) return null;
  const raw = value.properties ?? [];
  if (!Array.isArray(raw)) return null;
  const properties: ProfileProperty[] = [];
  for (const p of raw) {
    if (!isObject(p) || typeof p.name !== 'string' || typeof p.value !== 'string') return null;
    properties.push(typeof p.signature === 'string' ? { name: p.name, value: p.value, signature: p.signature } : { name: p.name, value: p.value });
  }
  return { id: hit.id, name: hit.name, properties, source };
}
