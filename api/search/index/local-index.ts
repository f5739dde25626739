// The in-memory index over the operator's data: each row kept as its JSON text, each typed value
// it holds posted under its fingerprint. A lookup parses only the rows it returns.
import path from 'node:path';
import type { CountryCode } from 'libphonenumber-js';
import { LruMap } from '../../../shared/lru-map.ts';
import { typedKey, type TypedValue } from '../types.ts';
import { DEFAULT_REGION } from '../values/phone.ts';
import { typedValues } from './fields.ts';
import { FileTally, firstProblems, rowValues } from './file-tally.ts';
import { listDataFiles, readRows } from './files.ts';
import { PostingsBuilder, type Postings } from './postings.ts';
import { RowStore } from './rows.ts';

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
  /** Memory of the rows (UTF-8 chunks and columns) and of the postings. */
  row_bytes: number;
  index_bytes: number;
}

export interface IndexHit { ref: string; record: Record<string, unknown>; entities: TypedValue[] }

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
  private readonly postings: Postings;
  private readonly region: CountryCode;
  private readonly parsed = new LruMap<IndexHit>(PARSED_ROWS);

  private constructor(rows: RowStore, files: string[], postings: Postings, region: CountryCode, stats: IndexStats) {
    this.rows = rows;
    this.files = files;
    this.postings = postings;
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
    const tallies: FileTally[] = [];
    for (const [fileIndex, file] of files.entries()) {
      const tally = new FileTally(names[fileIndex], options.onProblem);
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
          for (const value of typed.values) builder.add(typedKey(value), id);
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
    const values = builder.size;
    const postings = builder.build();
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
      index_bytes: postings.bytes,
    };
    return new LocalIndex(rows, names, postings, region, stats);
  }

  /**
   * Rows holding the value in file and line order: `limit` of them parsed after passing over
   * `offset`; `total` counts them all.
   */
  find(query: TypedValue, limit: number, offset = 0): { hits: IndexHit[]; total: number } {
    const key = typedKey(query);
    const ids = this.postings.find(key);
    const hits: IndexHit[] = [];
    let passed = 0;
    for (const id of ids) {
      if (hits.length >= limit) break;
      // Past the offset a row is taken as found; before it, only counting is needed, and fingerprints
      // make a false match vanishingly rare, so it is counted without being parsed.
      if (passed < offset) {
        passed += 1;
        continue;
      }
      const hit = this.row(id);
      // The parsed row settles a (vanishingly rare) shared fingerprint.
      if (hit.entities.some((e) => typedKey(e) === key)) hits.push(hit);
    }
    return { hits, total: ids.length };
  }

  /** Row `id` parsed and typed (shared between searches: callers must not change it). */
  private row(id: number): IndexHit {
    const cacheKey = String(id);
    const cached = this.parsed.get(cacheKey);
    if (cached) return cached;
    const record = JSON.parse(this.rows.text(id)) as Record<string, unknown>;
    const origin = this.rows.origin(id);
    const hit = { ref: `${this.files[origin.file]}:${origin.line}`, record, entities: typedValues(record, this.region) };
    this.parsed.set(cacheKey, hit);
    return hit;
  }
}
