// The imported files as /health shows them: the same statistics as the in-memory index's, read
// from the catalogue (one row per file, written by the import), so reading them costs the same at
// a thousand rows as at a billion.
import { createHash } from 'node:crypto';
import type pg from 'pg';

/** Runs a statement (the source's pool, through its bound on waiting statements). */
export type RunQuery = (text: string) => Promise<pg.QueryResult>;
import { firstProblems } from '../index/file-tally.ts';
import type { FileStats, IndexStats } from '../index/local-index.ts';
import { UNDEFINED_TABLE } from './schema.ts';

interface FileRow {
  name: string;
  rows_indexed: string;
  rows_skipped: string;
  values_rejected: string;
  values: string;
  problems: string[];
  last_error: string | null;
  indexed_at: Date;
  import_ms: number;
  row_bytes: string;
  index_bytes: string;
  region: string;
}

export interface Catalogue {
  stats: IndexStats;
  /** Files whose phone numbers without a country code were read in another region than `region`. */
  otherRegion: string[];
  /** Changes whenever an import swaps a file in or out: each file's name and import time. */
  version: string;
}

/** The catalogue; empty before the first import created the schema. */
export async function readCatalogue(query: RunQuery, region: string): Promise<Catalogue> {
  let rows: FileRow[] = [];
  try {
    // Byte order, as the in-memory index lists files (a sorted walk of the folder).
    ({ rows } = await query(`SELECT name, rows_indexed, rows_skipped, values_rejected, "values", problems, last_error,
      indexed_at, import_ms, row_bytes, index_bytes, region FROM search_files ORDER BY name COLLATE "C"`) as pg.QueryResult<FileRow>);
  } catch (error) {
    if ((error as { code?: string }).code !== UNDEFINED_TABLE) throw error;
  }
  const sum = (field: keyof FileRow) => rows.reduce((n, r) => n + Number(r[field]), 0);
  const dataFiles: FileStats[] = rows.map((r) => ({
    file: r.name,
    rows_indexed: Number(r.rows_indexed),
    rows_skipped: Number(r.rows_skipped),
    values_rejected: Number(r.values_rejected),
    indexed_at: r.indexed_at.toISOString(),
    last_error: r.last_error,
  }));
  const latest = rows.reduce<Date | null>((at, r) => (at && at > r.indexed_at ? at : r.indexed_at), null);
  return {
    stats: {
      files: rows.length,
      records: sum('rows_indexed'),
      values: sum('values'),
      malformed: sum('rows_skipped'),
      problems: firstProblems(rows),
      data_files: dataFiles,
      // What building this index took: the imports of its files.
      build_ms: sum('import_ms'),
      built_at: (latest ?? new Date()).toISOString(),
      // On disk, tables and their indexes.
      row_bytes: sum('row_bytes'),
      index_bytes: sum('index_bytes'),
    },
    otherRegion: rows.filter((r) => r.region !== region).map((r) => r.name),
    version: createHash('sha256').update(rows.map((r) => `${r.name}\n${r.indexed_at.toISOString()}`).join('\n')).digest('base64url').slice(0, 16),
  };
}
