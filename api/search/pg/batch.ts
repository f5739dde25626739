// One batch of an import typed into binary COPY for the two tables: each row once (its JSON text
// and its typed values), and one row per typed value keyed for lookup. A pure function, run in
// the import's worker threads: typing values is most of an import's cost.
import type { CountryCode } from 'libphonenumber-js';
import { rowValues } from '../index/file-tally.ts';
import { parseRow } from '../index/files.ts';
import { CopyRows } from './copy-binary.ts';
import { encodeEntities, valueKeyHalves } from './schema.ts';

export interface Batch {
  fileNo: number;
  region: CountryCode;
  /** Rows as JSON text (not yet parsed: a line that is no JSON object is skipped here), and the line each starts on. */
  texts: string[];
  lines: number[];
}

/** A row skipped (its typing failed) or a value rejected, on the line of its row. */
export interface BatchProblem { line: number; reason: string; skipped: boolean }

export interface TypedBatch {
  /** Binary COPY rows (no header or trailer) for search_rows and for search_values. */
  rows: Uint8Array;
  values: Uint8Array;
  rowsIndexed: number;
  valuesIndexed: number;
  /** In line order. */
  problems: BatchProblem[];
}

/** Bytes a value's row takes: field count, then key, file and line with their lengths. */
const VALUE_ROW_BYTES = 2 + 12 + 8 + 8;

export function typeBatch({ fileNo, region, texts, lines }: Batch): TypedBatch {
  let textLength = 0;
  for (const text of texts) textLength += text.length;
  // Room for most batches at once (rows: the text, its values' text, lengths; ~9 values a row).
  const rows = new CopyRows(textLength * 2 + texts.length * 64);
  const values = new CopyRows(texts.length * 10 * VALUE_ROW_BYTES);
  let rowsIndexed = 0;
  let valuesIndexed = 0;
  const problems: BatchProblem[] = [];
  for (let i = 0; i < texts.length; i++) {
    const line = lines[i];
    const row = parseRow(texts[i]);
    const typed = 'error' in row ? row : rowValues(row.record, region);
    if ('error' in typed) {
      problems.push({ line, reason: typed.error, skipped: true });
      continue;
    }
    rows.row(4).int4(fileNo).int4(line).text(texts[i]).text(encodeEntities(typed.values));
    for (const value of typed.values) {
      const [high, low] = valueKeyHalves(value);
      values.row(3).int8(high, low).int4(fileNo).int4(line);
    }
    rowsIndexed += 1;
    valuesIndexed += typed.values.length;
    for (const reason of typed.rejected) problems.push({ line, reason, skipped: false });
  }
  // Each in memory of its own, so the thread's answer is moved, not copied.
  return { rows: rows.bytes(), values: values.bytes(), rowsIndexed, valuesIndexed, problems };
}
