// The contract every search source keeps. A source declares the query types it answers and the
// entity types its records may yield; the pipeline asks only matching sources and extracts only
// declared entity types (SpiderFoot's watched/produced events).
import type { SearchType, TypedValue } from '../types.ts';

export interface SourceRecord {
  source: string;
  /** What the record is: an indexed row, a game player, an offline analysis. */
  kind: 'record' | 'player' | 'analysis';
  /** Stable identity within the source, so the cross pass can tell a record it already found. */
  ref: string;
  fields: Record<string, unknown>;
  /** Typed values the record holds (the query itself included; the pipeline drops it). */
  entities: TypedValue[];
  /** The data source an indexed row comes from (its file's sidecar facts, index/source-facts.ts). */
  origin?: { name: string; date: string | null; verified: boolean };
}

export interface SourceAnswer {
  records: SourceRecord[];
  /**
   * The source's answer as it came (upstream replies), for the `data` section. Sources whose
   * records are their answer (the index's rows, an analyser's facts) leave it out: a second copy
   * of every row was a ninth of an answer.
   */
  raw?: unknown;
  /** Matches in total when the answer was cut to the record limit. */
  total?: number;
  /** The count stopped at `total`: at least that many matched (a database counts up to a cap). */
  totalCapped?: boolean;
}

export interface SearchSource {
  readonly id: string;
  readonly description: string;
  readonly answers: readonly SearchType[];
  readonly produces: readonly SearchType[];
  /** Answers query patterns (TypedValue.match) of the types it answers. */
  readonly patterns?: boolean;
  /** Why the source cannot answer right now (nothing connected, still loading); null when it can. */
  unavailable(): string | null;
  /**
   * Names the data the source answers from now (an index build, an import's catalogue); it changes
   * when rows may have moved, so a client paging through can be told. Absent: the source pages nothing.
   */
  dataVersion?(): string | null;
  search(query: TypedValue, request: SourceRequest): Promise<SourceAnswer>;
}

export interface SourceRequest {
  /** Aborted at the deadline; a source may ignore it, the pipeline stops waiting all the same. */
  signal: AbortSignal;
  /** Records to return at most; more are counted in `total`. */
  limit: number;
  /** Matching records to pass over first, in the source's stable order (paging); 0 when absent. */
  offset?: number;
}

/** Thrown by a source that cannot answer this particular value; reported as `skipped`. */
export class SourceSkipped extends Error {
  override readonly name = 'SourceSkipped';
}
