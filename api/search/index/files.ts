// Reads the operator's data: one JSONL file, or a folder (searched recursively) of JSONL and CSV
// files. Every row comes out as a JSON object text; rows that are not objects are counted, not fatal.
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';

export const DATA_EXTENSIONS = ['.jsonl', '.ndjson', '.csv'];

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

function lines(file: string): readline.Interface {
  return readline.createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

async function* jsonlRows(file: string): AsyncGenerator<Row> {
  let line = 0;
  for await (const text of lines(file)) {
    line += 1;
    if (!text.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      yield { file, line, error: 'not JSON' };
      continue;
    }
    yield isObject(value) ? { file, line, text, record: value } : { file, line, error: 'not a JSON object' };
  }
}

/** Splits CSV text into cells (RFC 4180: quoted cells, "" escapes); null while a quote is open. */
export function splitCsv(text: string): string[] | null {
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
    else if (c === ',') { cells.push(cell); cell = ''; }
    else cell += c;
  }
  if (quoted) return null;
  cells.push(cell);
  return cells;
}

async function* csvRows(file: string): AsyncGenerator<Row> {
  let header: string[] | null = null;
  let pending = '';
  let line = 0;
  let startLine = 0;
  for await (const text of lines(file)) {
    line += 1;
    if (!pending) startLine = line;
    // A quoted cell may hold line breaks: keep reading until its quote closes.
    pending = pending ? `${pending}\n${text}` : text;
    const cells = splitCsv(pending);
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

export function readRows(file: string): AsyncGenerator<Row> {
  return path.extname(file).toLowerCase() === '.csv' ? csvRows(file) : jsonlRows(file);
}
