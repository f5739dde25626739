// Reads the operator's data: one JSONL file, or a folder (searched recursively) of JSONL and CSV
// files. Every row comes out as a JSON object text; rows that are not objects are counted, not fatal.
// CSV is read as spreadsheets write it: the delimiter (, ; or tab) is found from the header, and
// a UTF-8 byte order mark (Excel's "CSV UTF-8") is dropped, as it is from a JSONL file.
// Both backends (the in-memory index, the PostgreSQL import) read through here. Every row is
// bounded (MAX_ROW_BYTES, MAX_RECORD_LINES): one past a cap is a row problem, and any file is
// read in time proportional to its size.
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

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

/**
 * The longest row read, in UTF-8 bytes: a JSONL line, or a CSV record with the line breaks its
 * quoted cells hold. A longer one is a row problem, skipped without being held in memory.
 */
export const MAX_ROW_BYTES = 1024 * 1024;
/** The most lines one CSV record may span (line breaks inside quoted cells); past it, a row problem. */
export const MAX_RECORD_LINES = 1000;

/** A line of a file, numbered from 1, with its UTF-8 length; or that it was longer than the cap. */
type Line = { line: number; text: string; bytes: number } | { line: number; tooLong: true };

/** The next `byte` in `chunk` at or after `from`; the chunk's length when there is none. */
function next(chunk: Buffer, byte: number, from: number): number {
  const at = chunk.indexOf(byte, from);
  return at < 0 ? chunk.length : at;
}

/**
 * The file's lines, broken at \n, \r\n or a lone \r (as readline breaks them), a byte order mark
 * taken off the first. A line longer than `maxBytes` is never held: its bytes are passed over to
 * its end and it comes out as too long. Each byte is looked at once, so a file of any shape is
 * read in time proportional to its size.
 */
async function* lines(file: string, maxBytes: number): AsyncGenerator<Line> {
  let pieces: Buffer[] = [];
  let held = 0;
  let tooLong = false;
  let line = 0;
  // The previous chunk ended in \r: a \n opening this one belongs to the same break.
  let afterCr = false;
  const take = (chunk: Buffer, from: number, to: number) => {
    if (tooLong || to === from) return;
    if (held + to - from > maxBytes) {
      tooLong = true;
      pieces = [];
      held = 0;
    } else {
      pieces.push(chunk.subarray(from, to));
      held += to - from;
    }
  };
  const emit = (): Line => {
    line += 1;
    let result: Line;
    if (tooLong) result = { line, tooLong: true };
    else {
      let text = pieces.length === 1 ? pieces[0].toString('utf8') : Buffer.concat(pieces, held).toString('utf8');
      if (line === 1 && text.startsWith('\uFEFF')) text = text.slice(1);
      result = { line, text, bytes: held };
    }
    pieces = [];
    held = 0;
    tooLong = false;
    return result;
  };
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let pos = afterCr && chunk[0] === 0x0a ? 1 : 0;
    afterCr = false;
    let lf = -1;
    let cr = -1;
    while (pos < chunk.length) {
      if (lf < pos) lf = next(chunk, 0x0a, pos);
      if (cr < pos) cr = next(chunk, 0x0d, pos);
      const stop = Math.min(lf, cr);
      take(chunk, pos, stop);
      if (stop === chunk.length) break;
      yield emit();
      pos = stop + 1;
      if (stop === cr) {
        if (pos === chunk.length) afterCr = true;
        else if (chunk[pos] === 0x0a) pos += 1;
      }
    }
  }
  if (held > 0 || tooLong) yield emit();
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

/** A JSONL file's non-blank lines, each with its line number; a line over the cap is a problem. */
async function* jsonlLines(file: string): AsyncGenerator<{ line: number; text: string } | { line: number; error: string }> {
  for await (const l of lines(file, MAX_ROW_BYTES)) {
    if ('tooLong' in l) yield { line: l.line, error: `line over ${MAX_ROW_BYTES} bytes` };
    else if (l.text.trim()) yield { line: l.line, text: l.text };
  }
}

async function* jsonlRows(file: string): AsyncGenerator<Row> {
  for await (const l of jsonlLines(file)) {
    if ('error' in l) {
      yield { file, ...l };
      continue;
    }
    const row = parseRow(l.text);
    yield 'error' in row ? { file, line: l.line, error: row.error } : { file, line: l.line, text: l.text, record: row.record };
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

/**
 * The cells of one CSV record (RFC 4180: quoted cells, "" escapes), read a line at a time: the
 * quote state is carried from one line to the next, so each character is read once however many
 * lines a quoted cell spans.
 */
class CsvCells {
  private cells: string[] = [];
  private cell = '';
  private quoted = false;

  /** Reads one more line of the record; true when the record ends with it (no quote left open). */
  feed(text: string, delimiter: CsvDelimiter): boolean {
    let { cell, quoted } = this;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (quoted) {
        if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; }
        else if (c === '"') quoted = false;
        else cell += c;
      } else if (c === '"' && cell === '') quoted = true;
      else if (c === delimiter) { this.cells.push(cell); cell = ''; }
      else cell += c;
    }
    this.quoted = quoted;
    if (quoted) {
      // The line break is part of the quoted cell.
      this.cell = `${cell}\n`;
      return false;
    }
    this.cells.push(cell);
    this.cell = '';
    return true;
  }

  /** The record's cells; the reader is ready for the next record. */
  take(): string[] {
    const { cells } = this;
    this.reset();
    return cells;
  }

  reset(): void {
    this.cells = [];
    this.cell = '';
    this.quoted = false;
  }
}

/** Splits CSV text into cells (RFC 4180: quoted cells, "" escapes); null while a quote is open. */
export function splitCsv(text: string, delimiter: CsvDelimiter = ','): string[] | null {
  const cells = new CsvCells();
  return cells.feed(text, delimiter) ? cells.take() : null;
}

/**
 * A CSV file's rows, from its lines. A record is held at most MAX_RECORD_LINES lines and
 * MAX_ROW_BYTES bytes: one that runs past either (a quote never closed), or a quote still open at
 * the end of the file, is one row problem at the line it starts on, and the lines after that
 * first one are read again one by one, each a record of its own (a line whose quote does not
 * close on it is a problem too). So a stray quote costs its own row, not the rest of the file, and
 * each line is read at most twice.
 */
class CsvReader {
  private header: string[] | null = null;
  private delimiter: CsvDelimiter | null = null;
  private readonly cells = new CsvCells();
  /** The lines of the record being read, to read again if it is given up. */
  private held: Array<{ line: number; text: string }> = [];
  private bytes = 0;
  private readonly file: string;

  constructor(file: string) {
    this.file = file;
  }

  /** Reads a line into `out`'s rows. */
  line(l: Line, out: Row[]): void {
    if (this.held.length) {
      const over = 'tooLong' in l || this.bytes + 1 + l.bytes > MAX_ROW_BYTES ? `${MAX_ROW_BYTES} bytes`
        : this.held.length >= MAX_RECORD_LINES ? `${MAX_RECORD_LINES} lines` : null;
      if (over) {
        // Given up; the line that broke the cap begins the next record.
        this.giveUp(`record over ${over} (a quote not closed?)`, out);
        this.line(l, out);
        return;
      }
    }
    if ('tooLong' in l) {
      out.push({ file: this.file, line: l.line, error: `record over ${MAX_ROW_BYTES} bytes` });
      return;
    }
    if (this.held.length) this.bytes += 1 + l.bytes;
    else {
      if (!this.delimiter) {
        // Excel's own hint line ("sep=;") names the delimiter.
        const hint = /^sep=([,;\t])$/.exec(l.text);
        if (hint) {
          this.delimiter = hint[1] as CsvDelimiter;
          return;
        }
        this.delimiter = detectDelimiter(l.text);
      }
      this.bytes = l.bytes;
    }
    this.held.push(l);
    // A quoted cell may hold line breaks: keep reading until its quote closes.
    if (!this.cells.feed(l.text, this.delimiter!)) return;
    const line = this.held[0].line;
    this.held = [];
    this.record(line, this.cells.take(), out);
  }

  /** The end of the file: a record still open is given up. */
  end(out: Row[]): void {
    if (this.held.length) this.giveUp('unclosed quote', out);
  }

  /** Counts the open record as a problem and reads its lines after the first as records of one line. */
  private giveUp(reason: string, out: Row[]): void {
    const [first, ...rest] = this.held;
    this.held = [];
    this.cells.reset();
    out.push({ file: this.file, line: first.line, error: reason });
    for (const l of rest) {
      if (this.cells.feed(l.text, this.delimiter!)) this.record(l.line, this.cells.take(), out);
      else {
        this.cells.reset();
        out.push({ file: this.file, line: l.line, error: 'unclosed quote' });
      }
    }
  }

  private record(line: number, cells: string[], out: Row[]): void {
    const { file, header } = this;
    if (!header) {
      this.header = cells.map((h) => h.trim());
      return;
    }
    if (cells.length === 1 && !cells[0].trim()) return;
    if (cells.length !== header.length) {
      out.push({ file, line, error: `${cells.length} cells for ${header.length} columns` });
      return;
    }
    const record: Record<string, string> = {};
    header.forEach((name, i) => { if (cells[i] !== '') record[name] = cells[i]; });
    out.push({ file, line, text: JSON.stringify(record), record });
  }
}

async function* csvRows(file: string): AsyncGenerator<Row> {
  const reader = new CsvReader(file);
  const out: Row[] = [];
  for await (const l of lines(file, MAX_ROW_BYTES)) {
    reader.line(l, out);
    if (out.length) {
      yield* out;
      out.length = 0;
    }
  }
  reader.end(out);
  yield* out;
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
