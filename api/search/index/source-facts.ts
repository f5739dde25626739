// What a data file comes from: the operator's sidecar `<file>.source.json` beside it (a breach's
// name, the date of its data, whether it was verified, the kinds of data it holds, a note), read
// the same way by both backends. Every member is optional and unknown ones are ignored; a sidecar
// that cannot be read, or a member that is wrong, is a problem of its data file, never a failed
// start: the file is indexed with the facts that could be read, and defaults for the rest.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

export const SIDECAR_SUFFIX = '.source.json';
/** The largest sidecar read; a description, never data. */
export const MAX_SIDECAR_BYTES = 64 * 1024;
const MAX_NAME = 100;
const MAX_NOTE = 1000;
const MAX_FIELDS = 50;
const MAX_FIELD = 64;

export interface SourceFacts {
  /** Default: the data file's name without its extension. */
  name: string;
  /** YYYY, YYYY-MM or YYYY-MM-DD: when the data was taken. */
  date: string | null;
  verified: boolean;
  /** The kinds of data the source holds (email, password, ...). */
  fields: string[];
  note: string | null;
}

/** What a record says of where it comes from. */
export interface Origin { name: string; date: string | null; verified: boolean }

export interface SidecarReading {
  facts: SourceFacts;
  /** Why (part of) the sidecar was not taken; null when all of it was. */
  problem: string | null;
  /** The sidecar's SHA-256 ('' without one): a re-import compares it to see a change. */
  sha256: string;
}

export const defaultFacts = (file: string): SourceFacts => ({
  name: path.basename(file, path.extname(file)).slice(0, MAX_NAME), date: null, verified: false, fields: [], note: null,
});

export const originOf = (facts: SourceFacts): Origin => ({ name: facts.name, date: facts.date, verified: facts.verified });

/** A real calendar date, month or year: 2019, 2019-07, 2019-07-31. */
function isDate(text: string): boolean {
  const m = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/.exec(text);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), m[2] ? Number(m[2]) : 1, m[3] ? Number(m[3]) : 1];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const shortText = (value: unknown, max: number): value is string => typeof value === 'string' && value.trim() !== '' && value.length <= max;

/** The facts a sidecar's JSON text gives, over the file's defaults, and what was wrong in it. */
export function parseFacts(text: string, dataFile: string): { facts: SourceFacts; wrong: string[] } {
  const facts = defaultFacts(dataFile);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { facts, wrong: ['not JSON'] };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { facts, wrong: ['not a JSON object'] };
  const given = value as Record<string, unknown>;
  const wrong: string[] = [];
  if ('name' in given) {
    if (shortText(given.name, MAX_NAME)) facts.name = given.name.trim();
    else wrong.push(`name is not a text of 1-${MAX_NAME} characters`);
  }
  if ('date' in given) {
    if (typeof given.date === 'string' && isDate(given.date)) facts.date = given.date;
    else wrong.push('date is not YYYY, YYYY-MM or YYYY-MM-DD');
  }
  if ('verified' in given) {
    if (typeof given.verified === 'boolean') facts.verified = given.verified;
    else wrong.push('verified is not true or false');
  }
  if ('fields' in given) {
    const fields = given.fields;
    if (Array.isArray(fields) && fields.length <= MAX_FIELDS && fields.every((f) => shortText(f, MAX_FIELD))) facts.fields = [...new Set(fields.map((f) => f.trim()))];
    else wrong.push(`fields is not a list of at most ${MAX_FIELDS} texts of 1-${MAX_FIELD} characters`);
  }
  if ('note' in given) {
    if (shortText(given.note, MAX_NOTE)) facts.note = given.note.trim();
    else wrong.push(`note is not a text of 1-${MAX_NOTE} characters`);
  }
  return { facts, wrong };
}

/** Reads `<file>.source.json` beside a data file; no sidecar: the defaults. */
export async function readSidecar(dataFile: string): Promise<SidecarReading> {
  const sidecar = `${dataFile}${SIDECAR_SUFFIX}`;
  const label = path.basename(sidecar);
  let bytes: Buffer;
  try {
    const handle = await fs.open(sidecar, 'r');
    try {
      // One byte past the cap tells an oversized sidecar without reading all of it.
      const buffer = Buffer.alloc(MAX_SIDECAR_BYTES + 1);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      bytes = buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { facts: defaultFacts(dataFile), problem: null, sha256: '' };
    return { facts: defaultFacts(dataFile), problem: `${label} cannot be read (${code ?? (error as Error).message}); default source facts used`, sha256: `unreadable:${code}` };
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (bytes.length > MAX_SIDECAR_BYTES) return { facts: defaultFacts(dataFile), problem: `${label} is over ${MAX_SIDECAR_BYTES} bytes; default source facts used`, sha256 };
  const { facts, wrong } = parseFacts(bytes.toString('utf8').replace(/^\uFEFF/, ''), dataFile);
  return { facts, problem: wrong.length ? `${label}: ${wrong.join('; ')}; ignored` : null, sha256 };
}

/** One entry of GET /v1/search/sources: the files of one source name together. */
export interface DataSource extends SourceFacts { rows: number; files: number; updated_at: string }

/** A data file as /v1/search/sources counts it. */
export interface FileFacts { facts: SourceFacts; rows: number; updated_at: string }

/**
 * The data sources: files grouped by source name, in the order of their first file. A source's
 * facts are its first file's; its fields are every file's; it was updated when its latest file was.
 */
export function groupSources(files: readonly FileFacts[]): DataSource[] {
  const sources = new Map<string, DataSource>();
  for (const { facts, rows, updated_at } of files) {
    const known = sources.get(facts.name);
    if (!known) {
      sources.set(facts.name, { ...facts, fields: [...facts.fields], rows, files: 1, updated_at });
      continue;
    }
    known.rows += rows;
    known.files += 1;
    if (updated_at > known.updated_at) known.updated_at = updated_at;
    for (const f of facts.fields) if (!known.fields.includes(f)) known.fields.push(f);
  }
  return [...sources.values()];
}
