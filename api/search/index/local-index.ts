// The in-memory index over the operator's data: each row kept as its JSON text, each typed value
// it holds posted under its fingerprint. A lookup parses only the rows it returns.
import path from 'node:path';
import type { CountryCode } from 'libphonenumber-js';
import { LruMap } from '../../../shared/lru-map.ts';
import { holds, postedKeys, prefixTerm, queryKey, term } from '../lookup-keys.ts';
import type { TypedValue } from '../types.ts';
import { DEFAULT_REGION } from '../values/phone.ts';
import { typedValues } from './fields.ts';
import { FileTally, firstProblems, rowValues } from './file-tally.ts';
import { listDataFiles, readRows } from './files.ts';
import { PostingsBuilder, type Postings } from './postings.ts';
import { RowStore } from './rows.ts';
import { groupSources, originOf, readSidecar, type DataSource, type Origin, type SourceFacts } from './source-facts.ts';
import { TermsBuilder, type SortedTerms } from './terms.ts';

/** What one build made of one data file. */
export interface FileStats {
  /** Relative to SEARCH_DATA. */
  file: string;
  rows_indexed: number;
  rows_skipped: number;
  /** Values under a field named for a type (phone, email...) that are no value of that type. */
  values_rejected: number;
  indexed_at: string;
  /** The file's last problem in this build ("line 7: not JSON", or why it could not be read). */
  last_error: string | null;
}

/** A row skipped, a value rejected or a file unreadable; `line` is null for the whole file. */
export interface IndexProblem { file: string; line: number | null; reason: string }

export interface BuildOptions {
  /** Region of phone numbers stored without a country code. */
  region?: CountryCode;
  onProblem?: (problem: IndexProblem) => void;
}

export interface IndexStats {
  files: number;
  records: number;
  /** Typed values posted (a value held by n records counts n times). */
  values: number;
  /** Rows skipped as unreadable; `problems` shows the first few. */
  malformed: number;
  problems: string[];
  data_files: FileStats[];
  build_ms: number;
  built_at: string;
  /** Memory of the rows (UTF-8 chunks and columns) and of the postings and prefix terms. */
  row_bytes: number;
  index_bytes: number;
}

export interface IndexHit { ref: string; record: Record<string, unknown>; entities: TypedValue[]; origin: Origin }

/** A page of a lookup: `totalCapped` when the count is a floor (a prefix matched more terms than are read). */
export interface FoundPage { hits: IndexHit[]; total: number; totalCapped?: boolean }

/**
 * Parsed rows kept for reuse: typing a row's values costs tens of microseconds (phone numbers
 * most), and a value held by many rows returns the same rows to every search for it.
 */
const PARSED_ROWS = 20_000;

export class LocalIndex {
  readonly stats: IndexStats;
  private readonly rows: RowStore;
  /** Data file names relative to SEARCH_DATA, by file number. */
  private readonly files: string[];
  /** Each data file's source facts, by file number. */
  private readonly facts: SourceFacts[];
  private readonly postings: Postings;
  private readonly terms: SortedTerms;
  private readonly region: CountryCode;
  private readonly parsed = new LruMap<IndexHit>(PARSED_ROWS);

  private constructor(rows: RowStore, files: string[], facts: SourceFacts[], postings: Postings, terms: SortedTerms, region: CountryCode, stats: IndexStats) {
    this.rows = rows;
    this.files = files;
    this.facts = facts;
    this.postings = postings;
    this.terms = terms;
    this.region = region;
    this.stats = stats;
  }

  /**
   * Reads every data file. Nothing in a file stops the build: an unreadable row or file is
   * skipped, a value that fits no type is left out, and each is counted and reported.
   */
  static async build(dataPath: string, options: BuildOptions = {}): Promise<LocalIndex> {
    const started = performance.now();
    const region = options.region ?? DEFAULT_REGION;
    const files = await listDataFiles(dataPath);
    const base = files.length === 1 && files[0] === dataPath ? path.dirname(dataPath) : dataPath;
    const names = files.map((f) => path.relative(base, f));
    const rows = new RowStore();
    const builder = new PostingsBuilder();
    const termsBuilder = new TermsBuilder();
    const tallies: FileTally[] = [];
    const facts: SourceFacts[] = [];
    let values = 0;
    for (const [fileIndex, file] of files.entries()) {
      const tally = new FileTally(names[fileIndex], options.onProblem);
      const sidecar = await readSidecar(file);
      facts.push(sidecar.facts);
      if (sidecar.problem) tally.sidecar(sidecar.problem);
      try {
        for await (const row of readRows(file)) {
          if ('error' in row) {
            tally.skipped(row.line, row.error);
            continue;
          }
          const typed = rowValues(row.record, region);
          if ('error' in typed) {
            tally.skipped(row.line, typed.error);
            continue;
          }
          const id = rows.add(row.text, fileIndex, row.line);
          for (const value of typed.values) {
            for (const key of postedKeys(value)) builder.add(key, id);
            const t = term(value);
            if (t !== null) termsBuilder.add(t);
          }
          values += typed.values.length;
          tally.indexed();
          for (const reason of typed.rejected) tally.rejected(row.line, reason);
        }
      } catch (error) {
        // Unreadable (permissions, removed meanwhile): the rows read so far stay.
        tally.unreadable(error);
      }
      tally.finish();
      tallies.push(tally);
    }
    const dataFiles = tallies.map((t) => t.stats);
    const postings = builder.build();
    const terms = termsBuilder.build();
    const stats: IndexStats = {
      files: files.length,
      records: rows.size,
      values,
      malformed: dataFiles.reduce((n, f) => n + f.rows_skipped, 0),
      problems: firstProblems(tallies),
      data_files: dataFiles,
      build_ms: Math.round(performance.now() - started),
      built_at: new Date().toISOString(),
      row_bytes: rows.bytes,
      index_bytes: postings.bytes + terms.bytes,
    };
    return new LocalIndex(rows, names, facts, postings, terms, region, stats);
  }

  /** The data sources (GET /v1/search/sources): the files grouped by their source's name. */
  dataSources(): DataSource[] {
    return groupSources(this.stats.data_files.map((f, i) => ({ facts: this.facts[i], rows: f.rows_indexed, updated_at: f.indexed_at })));
  }

  /** Distinct prefix terms held (user names, messenger names, full names). */
  get termCount(): number {
    return this.terms.size;
  }

  /**
   * Rows holding the value in file and line order: `limit` of them parsed after passing over
   * `offset`; `total` counts them all.
   */
  find(query: TypedValue, limit: number, offset = 0): FoundPage {
    const { ids, total, capped } = this.matching(query, limit, offset);
    // The parsed rows settle a (vanishingly rare) shared fingerprint, or a derived key's match;
    // rows passed over are counted unparsed, as fingerprints make a false match vanishingly rare.
    const hits = ids.map((id) => this.row(id)).filter((hit) => holds(hit.entities, query));
    return capped ? { hits, total, totalCapped: true } : { hits, total };
  }

  /**
   * A page of the rows a query's keys point at, in file and line order (row numbers follow it),
   * and their count. A prefix gathers the rows of each term starting with it (MAX_PREFIX_TERMS
   * terms at most), each row once.
   */
  private matching(query: TypedValue, limit: number, offset: number): { ids: number[]; total: number; capped: boolean } {
    if (query.match !== 'prefix') return { ...this.postings.page(queryKey(query), offset, limit), capped: false };
    const { terms, capped } = this.terms.startingWith(prefixTerm(query));
    const all = new Set<number>();
    for (const t of terms) for (const id of this.postings.find(t)) all.add(id);
    const sorted = [...all].sort((a, b) => a - b);
    return { ids: sorted.slice(offset, offset + limit), total: sorted.length, capped };
  }

  /** Row `id` parsed and typed (shared between searches: callers must not change it). */
  private row(id: number): IndexHit {
    const cacheKey = String(id);
    const cached = this.parsed.get(cacheKey);
    if (cached) return cached;
    const record = JSON.parse(this.rows.text(id)) as Record<string, unknown>;
    const origin = this.rows.origin(id);
    const hit = { ref: `${this.files[origin.file]}:${origin.line}`, record, entities: typedValues(record, this.region), origin: originOf(this.facts[origin.file]) };
    this.parsed.set(cacheKey, hit);
    return hit;
  }
}
