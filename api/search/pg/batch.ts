// One batch of an import typed into binary COPY for the three tables: each row once (its JSON text
// and its typed values), one row per lookup key its values post (lookup-keys.ts), and the batch's
// distinct prefix terms (the import keeps each file's distinct ones). A pure function, run in the
// import's worker threads: typing values is most of an import's cost.
import type { CountryCode } from 'libphonenumber-js';
import { rowValues } from '../index/file-tally.ts';
import { parseRow } from '../index/files.ts';
import { postedKeys, term } from '../lookup-keys.ts';
import { SEARCH_TYPES } from '../types.ts';
import { CopyRows } from './copy-binary.ts';
import { encodeEntities, keyHalves } from './schema.ts';

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
  /** Binary COPY rows (no header or trailer) for search_rows, search_values and the terms (type, value, key). */
  rows: Uint8Array;
  values: Uint8Array;
  terms: Uint8Array;
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
  const values = new CopyRows(texts.length * 14 * VALUE_ROW_BYTES);
  const terms = new CopyRows(texts.length * 3 * 48);
  const batchTerms = new Set<string>();
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
      for (const key of postedKeys(value)) {
        const [high, low] = keyHalves(key);
        values.row(3).int8(high, low).int4(fileNo).int4(line);
      }
      const t = term(value);
      if (t === null || batchTerms.has(t)) continue;
      batchTerms.add(t);
      const [high, low] = keyHalves(t);
      terms.row(3).int2(SEARCH_TYPES.indexOf(value.type)).text(t.slice(value.type.length + 1)).int8(high, low);
    }
    rowsIndexed += 1;
    valuesIndexed += typed.values.length;
    for (const reason of typed.rejected) problems.push({ line, reason, skipped: false });
  }
  // Each in memory of its own, so the thread's answer is moved, not copied.
  return { rows: rows.bytes(), values: values.bytes(), terms: terms.bytes(), rowsIndexed, valuesIndexed, problems };
}
