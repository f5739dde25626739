// The imported files as /health shows them: the same statistics as the in-memory index's, read
// from the catalogue (one row per file, written by the import), so reading them costs the same at
// a thousand rows as at a billion.
import { createHash } from 'node:crypto';
import type pg from 'pg';

/** Runs a statement (the source's pool, through its bound on waiting statements). */
export type RunQuery = (text: string) => Promise<pg.QueryResult>;
import { firstProblems, KEPT_PROBLEMS } from '../index/file-tally.ts';
import type { FileStats, IndexStats } from '../index/local-index.ts';
import { defaultFacts, type FileFacts, type SourceFacts } from '../index/source-facts.ts';
import { UNDEFINED_TABLE } from './schema.ts';

/** A catalogue row as JSON: a database not yet upgraded by an import (format 1) lacks the source columns. */
interface FileRow {
  name: string;
  rows_indexed: number;
  rows_skipped: number;
  values_rejected: number;
  values: number;
  problems: string[];
  last_error: string | null;
  indexed_at: string;
  import_ms: number;
  row_bytes: number;
  index_bytes: number;
  region: string;
  source_name?: string | null;
  source_date?: string | null;
  source_verified?: boolean;
  source_fields?: string[];
  source_note?: string | null;
  source_problem?: string | null;
}

/** The source facts the import stored for a file (its sidecar's, or the defaults). */
function factsOf(r: FileRow): SourceFacts {
  const facts = defaultFacts(r.name);
  return {
    name: r.source_name ?? facts.name, date: r.source_date ?? null, verified: r.source_verified ?? false, fields: r.source_fields ?? [], note: r.source_note ?? null,
  };
}

export interface Catalogue {
  stats: IndexStats;
  /** Each file's source facts and row count, in file order. */
  files: Array<FileFacts & { file: string }>;
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
    const result = await query('SELECT to_jsonb(f) AS f FROM search_files f ORDER BY name COLLATE "C"') as pg.QueryResult<{ f: FileRow }>;
    rows = result.rows.map((r) => r.f);
  } catch (error) {
    if ((error as { code?: string }).code !== UNDEFINED_TABLE) throw error;
  }
  // A sidecar's problem comes first, as the in-memory index meets it (before the rows).
  for (const r of rows) {
    if (!r.source_problem) continue;
    r.problems = [`${r.name}: ${r.source_problem}`, ...r.problems].slice(0, KEPT_PROBLEMS);
    r.last_error ??= r.source_problem;
  }
  const sum = (field: keyof FileRow) => rows.reduce((n, r) => n + Number(r[field]), 0);
  const dataFiles: FileStats[] = rows.map((r) => ({
    file: r.name,
    rows_indexed: Number(r.rows_indexed),
    rows_skipped: Number(r.rows_skipped),
    values_rejected: Number(r.values_rejected),
    indexed_at: new Date(r.indexed_at).toISOString(),
    last_error: r.last_error,
  }));
  const latest = rows.reduce<string | null>((at, r) => {
    const indexed = new Date(r.indexed_at).toISOString();
    return at && at > indexed ? at : indexed;
  }, null);
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
      built_at: latest ?? new Date().toISOString(),
      // On disk, tables and their indexes.
      row_bytes: sum('row_bytes'),
      index_bytes: sum('index_bytes'),
    },
    files: rows.map((r, i) => ({ file: r.name, facts: factsOf(r), rows: dataFiles[i].rows_indexed, updated_at: dataFiles[i].indexed_at })),
    otherRegion: rows.filter((r) => r.region !== region).map((r) => r.name),
    version: createHash('sha256').update(dataFiles.map((f) => `${f.file}\n${f.indexed_at}`).join('\n')).digest('base64url').slice(0, 16),
  };
}
