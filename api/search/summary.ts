// What a search found, reshaped: the entities to pivot on, the sections a reader scans, and the
// merged values per field. Pure functions over the records of both passes.
import { flatten } from './index/fields.ts';
import type { SearchSource, SourceRecord } from './sources/source.ts';
import { SEARCH_TYPES, typedKey, type SearchType, type TypedValue } from './types.ts';

export const recordKey = (r: SourceRecord) => `${r.source}:${r.ref}`;

/**
 * Typed values the records hold, each once, without the query; only the entity types the
 * record's source declares it produces. Ordered by type (the order of SEARCH_TYPES, most
 * telling first) and within a type by how many records hold the value.
 */
export function extractEntities(records: SourceRecord[], sources: readonly SearchSource[], query: TypedValue): TypedValue[] {
  const produces = new Map(sources.map((s) => [s.id, new Set<SearchType>(s.produces)]));
  const found = new Map<string, { value: TypedValue; count: number }>();
  const queryKey = typedKey(query);
  for (const record of records) {
    for (const entity of record.entities) {
      const key = typedKey(entity);
      if (key === queryKey || !produces.get(record.source)?.has(entity.type)) continue;
      const entry = found.get(key) ?? { value: entity, count: 0 };
      entry.count += 1;
      found.set(key, entry);
    }
  }
  const rank = (t: SearchType) => SEARCH_TYPES.indexOf(t);
  return [...found.values()]
    .sort((a, b) => rank(a.value.type) - rank(b.value.type) || b.count - a.count)
    .map((e) => e.value);
}

/** `entities_found`: values grouped by type. */
export function groupByType(values: TypedValue[]): Partial<Record<SearchType, string[]>> {
  const groups: Partial<Record<SearchType, string[]>> = {};
  for (const { type, value } of values) (groups[type] ??= []).push(value);
  return groups;
}

const SECTION_OF: Record<SearchType, 'contacts' | 'identity' | 'accounts' | 'network'> = {
  phone: 'contacts', email: 'contacts',
  fio: 'identity', social_id: 'identity',
  messenger_user: 'accounts', network_user: 'accounts',
  ip: 'network', domain: 'network', mac: 'network',
  // Lookup keys only: never an entity of a record, so never listed; named for completeness.
  email_sha256: 'contacts', phone_sha256: 'contacts',
};

/** A data source a value was found in, as its records name it (record.origin). */
export interface SourceName { name: string; date: string | null }

/** `sources`: present when any record holding the value names its data source. */
export interface SectionItem { value: string; records: number; sources?: SourceName[] }

/**
 * `smart_sections`: every value found (both passes, query excluded) under contacts, identity,
 * accounts or network, with how many records hold it and the data sources (name and date) they
 * come from; game players; offline analyses.
 */
export function smartSections(records: SourceRecord[], query: TypedValue) {
  const sections: Record<string, Partial<Record<SearchType, SectionItem[]>>> = {};
  const counts = new Map<string, { value: TypedValue; records: number; sources: Map<string, SourceName> }>();
  const players: Array<Record<string, unknown>> = [];
  const analysis: Array<{ source: string; value: string; facts: Record<string, unknown> }> = [];
  const queryKey = typedKey(query);
  for (const record of records) {
    if (record.kind === 'analysis') analysis.push({ source: record.source, value: record.ref, facts: record.fields });
    if (record.kind === 'player') players.push(record.fields);
    for (const entity of record.entities) {
      const key = typedKey(entity);
      if (key === queryKey) continue;
      const entry = counts.get(key) ?? { value: entity, records: 0, sources: new Map() };
      entry.records += 1;
      if (record.origin) entry.sources.set(`${record.origin.name}\n${record.origin.date}`, { name: record.origin.name, date: record.origin.date });
      counts.set(key, entry);
    }
  }
  for (const { value, records: n, sources } of [...counts.values()].sort((a, b) => b.records - a.records)) {
    const item: SectionItem = { value: value.value, records: n, ...(sources.size ? { sources: [...sources.values()] } : {}) };
    ((sections[SECTION_OF[value.type]] ??= {})[value.type] ??= []).push(item);
  }
  return { ...sections, ...(players.length ? { players } : {}), ...(analysis.length ? { analysis } : {}) };
}

/** `aggregated`: each field path of the results with its distinct values. */
export function aggregate(records: SourceRecord[]): Record<string, string[]> {
  const merged = new Map<string, Set<string>>();
  for (const record of records) {
    for (const [path, value] of flatten(record.fields)) {
      let values = merged.get(path);
      if (!values) merged.set(path, (values = new Set()));
      values.add(value);
    }
  }
  return Object.fromEntries([...merged].map(([path, values]) => [path, [...values]]));
}
