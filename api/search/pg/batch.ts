// One batch of an import typed into COPY text for the two tables: each row once (its JSON text and
// its typed values), and one line per typed value keyed for lookup. A pure function, run in the
// import's worker threads: typing values is most of an import's cost.
import type { CountryCode } from 'libphonenumber-js';
import { rowValues } from '../index/file-tally.ts';
import { encodeEntities, valueKey } from './schema.ts';

export interface Batch {
  fileNo: number;
  region: CountryCode;
  /** Rows as JSON object text, and the line each starts on. */
  texts: string[];
  lines: number[];
}

/** A row skipped (its typing failed) or a value rejected, on the line of its row. */
export interface BatchProblem { line: number; reason: string; skipped: boolean }

export interface TypedBatch {
  /** COPY text (UTF-8) for search_rows and for search_values. */
  rows: Uint8Array;
  values: Uint8Array;
  rowsIndexed: number;
  valuesIndexed: number;
  /** In line order. */
  problems: BatchProblem[];
}

const SPECIAL = /[\\\t\n\r]/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
/** A field of COPY's text format: backslash, tab and line breaks escaped. */
export const copyField = (text: string): string => (SPECIAL.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]) : text);

const encoder = new TextEncoder();

export function typeBatch({ fileNo, region, texts, lines }: Batch): TypedBatch {
  let rows = '';
  let values = '';
  let rowsIndexed = 0;
  let valuesIndexed = 0;
  const problems: BatchProblem[] = [];
  for (let i = 0; i < texts.length; i++) {
    const line = lines[i];
    const typed = rowValues(JSON.parse(texts[i]) as Record<string, unknown>, region);
    if ('error' in typed) {
      problems.push({ line, reason: typed.error, skipped: true });
      continue;
    }
    rows += `${fileNo}\t${line}\t${copyField(texts[i])}\t${copyField(encodeEntities(typed.values))}\n`;
    for (const value of typed.values) values += `${valueKey(value)}\t${fileNo}\t${line}\n`;
    rowsIndexed += 1;
    valuesIndexed += typed.values.length;
    for (const reason of typed.rejected) problems.push({ line, reason, skipped: false });
  }
  // Encoded here, each in its own buffer, so the thread's answer is moved, not copied.
  return { rows: encoder.encode(rows), values: encoder.encode(values), rowsIndexed, valuesIndexed, problems };
}
