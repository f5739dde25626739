// An offline analyser is a source that knows facts about a value by itself (ranges, suffixes,
// numbering plans, vendor blocks) and needs no personal data: one analysis record per query.
import type { SearchType, TypedValue } from '../../types.ts';
import type { SearchSource, SourceAnswer } from '../source.ts';

export function analyserSource(id: string, type: SearchType, description: string, analyse: (value: string) => Record<string, unknown>): SearchSource {
  return {
    id,
    description,
    answers: [type],
    // Facts about the value, not new values to pivot on.
    produces: [],
    unavailable: () => null,
    async search(query: TypedValue): Promise<SourceAnswer> {
      const facts = analyse(query.value);
      return { records: [{ source: id, kind: 'analysis', ref: query.value, fields: facts, entities: [] }] };
    },
  };
}
