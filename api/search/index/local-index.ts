// The in-memory index over the operator's data: each row kept as its JSON text, each typed value
// it holds posted under its fingerprint. A lookup parses only the rows it returns.
import path from 'node:path';
import { LruMap } from '../../cache.ts';
import { typedKey, type TypedValue } from '../types.ts';
import { typedValues } from './fields.ts';
import { listDataFiles, readRows } from './files.ts';
import { PostingsBuilder, type Postings } from './postings.ts';
import { RowStore } from './rows.ts';

export interface IndexStats {
  files: number;
  records: number;
  /** Typed values posted (a value held by n records counts n times). */
  values: number;
  /** Rows skipped as unreadable; `problems` shows the first few. */
  malformed: number;
  problems: string[];
  build_ms: number;
  built_at: string;
  /** Memory of the rows (UTF-8 chunks and columns) and of the postings. */
  row_bytes: number;
  index_bytes: number;
}

export interface IndexHit { ref: string; record: Record<string, unknown>; text: string; entities: TypedValue[] }

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
  private readonly parsed = new LruMap<IndexHit>(PARSED_ROWS);

  private constructor(rows: RowStore, files: string[], postings: Postings, stats: IndexStats) {
    this.rows = rows;
    this.files = files;
    this.postings = postings;
    this.stats = stats;
  }

  static async build(dataPath: string): Promise<LocalIndex> {
    const started = performance.now();
    const files = await listDataFiles(dataPath);
    const base = files.length === 1 && files[0] === dataPath ? path.dirname(dataPath) : dataPath;
    const rows = new RowStore();
    const builder = new PostingsBuilder();
    const problems: string[] = [];
    let malformed = 0;
    for (const [fileIndex, file] of files.entries()) {
      for await (const row of readRows(file)) {
        if ('error' in row) {
          malformed += 1;
          if (problems.length < 5) problems.push(`${path.relative(base, row.file)}:${row.line}: ${row.error}`);
          continue;
        }
        const id = rows.add(row.text, fileIndex, row.line);
        for (const value of typedValues(row.record)) builder.add(typedKey(value), id);
      }
    }
    const values = builder.size;
    const postings = builder.build();
    const stats: IndexStats = {
      files: files.length,
      records: rows.size,
      values,
      malformed,
      problems,
      build_ms: Math.round(performance.now() - started),
      built_at: new Date().toISOString(),
      row_bytes: rows.bytes,
      index_bytes: postings.bytes,
    };
    return new LocalIndex(rows, files.map((f) => path.relative(base, f)), postings, stats);
  }

  /** Rows holding the value, the first `limit` of them parsed; `total` counts them all. */
  find(query: TypedValue, limit: number): { hits: IndexHit[]; total: number } {
    const key = typedKey(query);
    const ids = this.postings.find(key);
    const hits: IndexHit[] = [];
    for (const id of ids) {
      if (hits.length >= limit) break;
      const hit = this.row(id);
      // Fingerprints make a false match vanishingly rare; the parsed row settles it anyway.
      if (hit.entities.some((e) => typedKey(e) === key)) hits.push(hit);
    }
    return { hits, total: ids.length };
  }

  /** Row `id` parsed and typed (shared between searches: callers must not change it). */
  private row(id: number): IndexHit {
    const cacheKey = String(id);
    const cached = this.parsed.get(cacheKey);
    if (cached) return cached;
    const text = this.rows.text(id);
    const record = JSON.parse(text) as Record<string, unknown>;
    const origin = this.rows.origin(id);
    const hit = { ref: `${this.files[origin.file]}:${origin.line}`, record, text, entities: typedValues(record) };
    this.parsed.set(cacheKey, hit);
    return hit;
  }
}
