// The poisoned-row rules, for every backend: what one data row gives the index (its typed values,
// or why it is skipped) and what reading one file came to (its /health counts and problems). The
// in-memory index and the PostgreSQL import both count through here, so they count alike.
import type { CountryCode } from 'libphonenumber-js';
import type { Logger } from '../../../shared/log.ts';
import type { TypedValue } from '../types.ts';
import { typedValues, type RejectedValue } from './fields.ts';
import type { FileStats, IndexProblem } from './local-index.ts';

/** Problems logged one by one per file and build; the rest are only counted. */
export const LOGGED_PROBLEMS_PER_FILE = 20;
/** Problems of a file kept for /health (`problems` shows the first five of all files). */
export const KEPT_PROBLEMS = 5;

/** A readable row's typed values and the named values it rejects; or why the row is skipped. */
export type RowValues = { values: TypedValue[]; rejected: string[] } | { error: string };

export function rowValues(record: Record<string, unknown>, region: CountryCode): RowValues {
  const rejected: RejectedValue[] = [];
  try {
    const values = typedValues(record, region, rejected);
    return { values, rejected: rejected.map(({ field, type }) => `${field} is not a valid ${type}; the value is not indexed`) };
  } catch (error) {
    // A value no normaliser foresaw must cost its row, never the index.
    return { error: `unreadable value (${(error as Error).message})` };
  }
}

export class FileTally {
  readonly stats: FileStats;
  /** The file's first problems as `file:line: reason`. */
  readonly problems: string[] = [];
  private readonly onProblem?: (problem: IndexProblem) => void;

  constructor(file: string, onProblem?: (problem: IndexProblem) => void) {
    this.stats = { file, rows_indexed: 0, rows_skipped: 0, values_rejected: 0, indexed_at: '', last_error: null };
    this.onProblem = onProblem;
  }

  skipped(line: number, reason: string): void {
    this.stats.rows_skipped += 1;
    this.problem(line, reason);
  }

  indexed(rows = 1): void {
    this.stats.rows_indexed += rows;
  }

  /** A value under a field named for a type that is no value of it; its row is indexed. */
  rejected(line: number, reason: string): void {
    this.stats.values_rejected += 1;
    this.problem(line, reason);
  }

  /** The file's sidecar (source facts) was not taken in full; its rows are indexed all the same. */
  sidecar(problem: string): void {
    this.problem(null, problem);
  }

  /** The file could not be read (permissions, removed meanwhile). */
  unreadable(error: unknown): void {
    this.problem(null, `cannot read the file (${(error as Error).message})`);
  }

  finish(): FileStats {
    this.stats.indexed_at = new Date().toISOString();
    return this.stats;
  }

  private problem(line: number | null, reason: string): void {
    const { file } = this.stats;
    this.stats.last_error = line === null ? reason : `line ${line}: ${reason}`;
    if (this.problems.length < KEPT_PROBLEMS) this.problems.push(line === null ? `${file}: ${reason}` : `${file}:${line}: ${reason}`);
    this.onProblem?.({ file, line, reason });
  }
}

/** Logs each file's first problems (file, line, reason; never the value); the rest are counted. */
export function problemLogger(log: Logger): (problem: IndexProblem) => void {
  const logged = new Map<string, number>();
  return ({ file, line, reason }) => {
    const n = (logged.get(file) ?? 0) + 1;
    logged.set(file, n);
    if (n <= LOGGED_PROBLEMS_PER_FILE) log.warn('search data problem', { file, line, reason });
  };
}

/** /health's `problems`: the first five of all files, in file order. */
export const firstProblems = (files: ReadonlyArray<{ problems: readonly string[] }>): string[] =>
  files.flatMap((f) => f.problems).slice(0, KEPT_PROBLEMS);
