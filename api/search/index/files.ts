// Reads the operator's data: one JSONL file, or a folder (searched recursively) of JSONL and CSV
// files. Every row comes out as a JSON object text; rows that are not objects are counted, not fatal.
// CSV is read as spreadsheets write it: the delimiter (, ; or tab) is found from the header, and
// a UTF-8 byte order mark (Excel's "CSV UTF-8") is dropped, as it is from a JSONL file.
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';

export const DATA_EXTENSIONS = ['.jsonl', '.ndjson', '.csv', '.tsv'];

/** A row as stored (JSON text) and as parsed; or why it was skipped. */
export type Row = { file: string; line: number; text: string; record: Record<string, unknown> } | { file: string; line: number; error: string };

export async function listDataFiles(dataPath: string): Promise<string[]> {
  const stat = await fs.stat(dataPath);
  if (stat.isFile()) return [dataPath];
  const entries = await fs.readdir(dataPath, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && DATA_EXTENSIONS.includes(path.extname(e.name).toLowerCase()))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

/** The file's lines, a byte order mark taken off the first. */
async function* lines(file: string): AsyncGenerator<string> {
  let first = true;
  for await (const text of readline.createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity })) {
    yield first && text.startsWith('\uFEFF') ? text.slice(1) : text;
    first = false;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSONL line as a row: the object it holds, or why it is skipped. */
export function parseRow(text: string): { record: Record<string, unknown> } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: 'not JSON' };
  }
  return isObject(value) ? { record: value } : { error: 'not a JSON object' };
}

/** A JSONL file's non-blank lines, each with its line number. */
async function* jsonlLines(file: string): AsyncGenerator<{ line: number; text: string }> {
  let line = 0;
  for await (const text of lines(file)) {
    line += 1;
    if (text.trim()) yield { line, text };
  }
}

async function* jsonlRows(file: string): AsyncGenerator<Row> {
  for await (const { line, text } of jsonlLines(file)) {
    const row = parseRow(text);
    yield 'error' in row ? { file, line, error: row.error } : { file, line, text, record: row.record };
  }
}

export const CSV_DELIMITERS = [',', ';', '\t'] as const;
export type CsvDelimiter = typeof CSV_DELIMITERS[number];

/**
 * The delimiter a header line uses: the candidate that occurs most often outside quotes (a
 * German or Russian Excel writes ;, a TSV tab). A one-column header has none; then it is a comma.
 */
export function detectDelimiter(header: string): CsvDelimiter {
  const counts = new Map<string, number>();
  let quoted = false;
  for (const c of header) {
    if (c === '"') quoted = !quoted;
    else if (!quoted) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  let best: CsvDelimiter = ',';
  for (const d of CSV_DELIMITERS) if ((counts.get(d) ?? 0) > (counts.get(best) ?? 0)) best = d;
  return best;
}

/** Splits CSV text into cells (RFC 4180: quoted cells, "" escapes); null while a quote is open. */
export function splitCsv(text: string, delimiter: CsvDelimiter = ','): string[] | null {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; }
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"' && cell === '') quoted = true;
    else if (c === delimiter) { cells.push(cell); cell = ''; }
    else cell += c;
  }
  if (quoted) return null;
  cells.push(cell);
  return cells;
}

async function* csvRows(file: string): AsyncGenerator<Row> {
  let header: string[] | null = null;
  let delimiter: CsvDelimiter | null = null;
  let pending = '';
  let line = 0;
  let startLine = 0;
  for await (const text of lines(file)) {
    line += 1;
    if (!pending) startLine = line;
    // A quoted cell may hold line breaks: keep reading until its quote closes.
    // Excel's own hint line ("sep=;") names the delimiter.
    const hint = !delimiter && /^sep=([,;\t])$/.exec(text);
    if (hint) {
      delimiter = hint[1] as CsvDelimiter;
      continue;
    }
    pending = pending ? `${pending}\n${text}` : text;
    delimiter ??= detectDelimiter(pending);
    const cells = splitCsv(pending, delimiter);
    if (!cells) continue;
    pending = '';
    if (!header) {
      header = cells.map((h) => h.trim());
      continue;
    }
    if (cells.length === 1 && !cells[0].trim()) continue;
    if (cells.length !== header.length) {
      yield { file, line: startLine, error: `${cells.length} cells for ${header.length} columns` };
      continue;
    }
    const record: Record<string, string> = {};
    header.forEach((name, i) => { if (cells[i] !== '') record[name] = cells[i]; });
    yield { file, line: startLine, text: JSON.stringify(record), record };
  }
  if (pending) yield { file, line: startLine, error: 'unclosed quote' };
}

const isCsv = (file: string) => ['.csv', '.tsv'].includes(path.extname(file).toLowerCase());

export function readRows(file: string): AsyncGenerator<Row> {
  return isCsv(file) ? csvRows(file) : jsonlRows(file);
}

/**
 * The rows' texts without parsing JSONL lines, for a reader that parses them elsewhere (the
 * import, in its typing threads) with `parseRow`; CSV rows come out as readRows gives them.
 */
export function readRowTexts(file: string): AsyncGenerator<{ line: number; text: string } | { line: number; error: string }> {
  return isCsv(file) ? csvRows(file) : jsonlLines(file);
}
