// The PostgreSQL schema of the indexed data (docs/search.md, "PostgreSQL"): a catalogue of the
// imported files, each row stored once, and each typed value as a 64-bit key beside the row it is
// in. Rows and values are partitioned by file: an import fills fresh tables, indexes them once
// (a sorted build, not millions of random index inserts) and swaps them in for the file's old
// ones in one transaction, so a search sees a file's old rows or its new ones, never a mix.
import type pg from 'pg';
import { fingerprint } from '../index/postings.ts';
import { SEARCH_TYPES, type TypedValue } from '../types.ts';

/**
 * The typing rules the rows were imported under: raise it when a change to values/* or
 * index/fields.ts types existing data differently, and the next import re-reads every file.
 */
export const IMPORT_FORMAT = 2;

/** Channel an import notifies when it has swapped a file in; every search instance listens. */
export const CHANGES_CHANNEL = 'search_data';

/** First key of this project's advisory locks (the second names what is locked). */
export const LOCK_SPACE = 0x5346;
export const SCHEMA_LOCK = 0;

/** The SQLSTATE of a table that does not exist (no import has made the schema yet). */
export const UNDEFINED_TABLE = '42P01';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS search_files (
  file_no integer PRIMARY KEY,
  name text NOT NULL UNIQUE,
  rows_table text NOT NULL,
  values_table text NOT NULL,
  size bigint NOT NULL,
  mtime_ns bigint NOT NULL,
  sha256 text NOT NULL,
  region text NOT NULL,
  format integer NOT NULL,
  rows_indexed bigint NOT NULL,
  rows_skipped bigint NOT NULL,
  values_rejected bigint NOT NULL,
  "values" bigint NOT NULL,
  problems text[] NOT NULL,
  last_error text,
  indexed_at timestamptz NOT NULL,
  import_ms integer NOT NULL,
  row_bytes bigint NOT NULL,
  index_bytes bigint NOT NULL
);
CREATE SEQUENCE IF NOT EXISTS search_file_no;
CREATE TABLE IF NOT EXISTS search_rows (
  file_no integer NOT NULL,
  line integer NOT NULL,
  body text NOT NULL,
  entities text NOT NULL,
  PRIMARY KEY (file_no, line)
) PARTITION BY LIST (file_no);
CREATE TABLE IF NOT EXISTS search_values (
  key bigint NOT NULL,
  file_no integer NOT NULL,
  line integer NOT NULL
) PARTITION BY LIST (file_no);
CREATE INDEX IF NOT EXISTS search_values_key ON search_values (key, file_no, line);
-- Format 2: the distinct prefix terms of each file (user names, messenger names, full names), in
-- byte order ("C") so a prefix is a range; and the file's source facts (its sidecar).
CREATE TABLE IF NOT EXISTS search_terms (
  file_no integer NOT NULL,
  type smallint NOT NULL,
  value text COLLATE "C" NOT NULL,
  key bigint NOT NULL
) PARTITION BY LIST (file_no);
CREATE INDEX IF NOT EXISTS search_terms_value ON search_terms (type, value) INCLUDE (key);
ALTER TABLE search_files
  ADD COLUMN IF NOT EXISTS terms_table text,
  ADD COLUMN IF NOT EXISTS sidecar_sha256 text NOT NULL DEFAULT '',
  ADD COLUMN IF NOT EXISTS source_name text,
  ADD COLUMN IF NOT EXISTS source_date text,
  ADD COLUMN IF NOT EXISTS source_verified boolean NOT NULL DEFAULT false,
  ADD COLUMN IF NOT EXISTS source_fields text[] NOT NULL DEFAULT '{}',
  ADD COLUMN IF NOT EXISTS source_note text,
  ADD COLUMN IF NOT EXISTS source_problem text;
`;

/** Creates what is missing; two importers starting at once take turns. */
export async function ensureSchema(client: pg.ClientBase): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_SPACE, SCHEMA_LOCK]);
    await client.query(SCHEMA);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/**
 * A lookup key's (lookup-keys.ts) 64-bit form: the index's fingerprint, as a signed bigint. Two
 * keys share one about once in 2^64 pairs; the source checks the rows it returns, as the
 * in-memory index does.
 */
export function lookupKey(text: string): string {
  const [high, low] = keyHalves(text);
  return BigInt.asIntN(64, (BigInt(high) << 32n) | BigInt(low)).toString();
}

/** The same key as its high and low 32 bits (unsigned), as the import writes it (binary COPY). */
export function keyHalves(text: string): [high: number, low: number] {
  const [low, high] = fingerprint(text);
  return [high, low];
}

/** The smallest text above every text starting with `prefix` in byte order ("C"); null when there is none. */
export function prefixEnd(prefix: string): string | null {
  const points = [...prefix];
  while (points.length) {
    const last = points.pop()!.codePointAt(0)!;
    if (last >= 0x10ffff) continue;
    // UTF-8 byte order is code point order; surrogates are no characters.
    const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
    return points.join('') + String.fromCodePoint(next);
  }
  return null;
}

/**
 * A row's typed values as stored beside it: a JSON array of strings, each one character for the
 * type ('0' + its place in SEARCH_TYPES) and the value.
 */
export const encodeEntities = (values: readonly TypedValue[]): string =>
  JSON.stringify(values.map((v) => `${String.fromCharCode(0x30 + SEARCH_TYPES.indexOf(v.type))}${v.value}`));
export const decodeEntities = (text: string): TypedValue[] =>
  (JSON.parse(text) as string[]).map((e) => ({ type: SEARCH_TYPES[e.charCodeAt(0) - 0x30], value: e.slice(1) }));

/**
 * The database cannot be used now, whatever the query: unreachable, shutting down, out of
 * connections, or refusing this login or database (classes 08, 28, 3D, 53300, 57P0x).
 */
export function isDatabaseDown(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return /^(08|28|3D)/.test(code) || ['53300', '57P01', '57P02', '57P03'].includes(code);
  // Socket errors (ECONNREFUSED, ECONNRESET) and the client's own "Connection terminated", "timeout exceeded when trying to connect".
  return typeof code === 'string' || /connection|terminated|timeout/i.test((error as Error).message ?? '');
}
