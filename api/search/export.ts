// Export: every local_index row of the main pass (up to the plan's export_rows) streamed as CSV or
// JSON lines, read from the source a page at a time and written with back-pressure (the stream is
// read only as fast as the client takes it), so the service never holds more than one page. The
// headers go out before the rows, so how the export ended is told by its last line (the trailer):
// a stream without one was cut off.
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import { asks, untilAborted } from './pipeline.ts';
import type { SearchSource, SourceRecord } from './sources/source.ts';
import type { TypedValue } from './types.ts';

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type ExportFormat = typeof EXPORT_FORMATS[number];
/** Rows read from the source at once. */
export const EXPORT_PAGE_ROWS = 1000;
/**
 * An export's own time limit (it is not bound by the search deadline; each page is by the source's
 * limit): past it no page is read (the trailer says `time_limit`), and a minute later a client that
 * has stopped reading has its connection closed, so a stalled download cannot hold its place.
 */
export const EXPORT_MAX_MS = 10 * 60_000;
const STALLED_MS = EXPORT_MAX_MS + 60_000;

/**
 * Why an export stopped before the last row: the plan's cap, moved data, a slow or failing source,
 * a source that cannot answer at all (no data configured, the database down: as a search reports
 * it skipped), its time limit; `disconnected` (the client left) only reaches the audit line.
 */
export type ExportStop = 'cap' | 'data_changed' | 'timed_out' | 'failed' | 'unavailable' | 'time_limit' | 'disconnected';
export interface ExportEnd { rows: number; complete: boolean; reason: ExportStop | null }

/** The source facts of a row: its origin, else (a source that names none) the data file it came from. */
function originOf(record: SourceRecord): { name: string; date: string | null; verified: boolean | null } {
  return record.origin ?? { name: record.ref.slice(0, record.ref.lastIndexOf(':')), date: null, verified: null };
}

// ---- formats ----------------------------------------------------------------------------------

/** A cell a spreadsheet would run as a formula gets a leading quote (OWASP CSV injection). */
const FORMULA = /^[=+\-@\t\r]/;
function cell(value: unknown): string {
  const text = value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  // Every cell quoted (RFC 4180): commas, quotes and line breaks inside need nothing else.
  return `"${(FORMULA.test(text) ? `'${text}` : text).replaceAll('"', '""')}"`;
}
const csvLine = (cells: unknown[]) => `${cells.map(cell).join(',')}\r\n`;
const FACTS = ['ref', 'source_name', 'source_date', 'source_verified'];

interface Writer { header(first: SourceRecord[]): string; row(record: SourceRecord): string; end(end: ExportEnd): string }

/**
 * CSV: the fields of the first page's rows are the columns (in the order first seen); a later row's
 * other fields go, as JSON, into the last column, `other`. The trailer is a row whose ref is `#end`.
 */
function csvWriter(): Writer {
  let columns: string[] = [];
  return {
    header(first) {
      columns = [...new Set(first.flatMap((r) => Object.keys(r.fields)))];
      return csvLine([...FACTS, ...columns, 'other']);
    },
    row(record) {
      const { name, date, verified } = originOf(record);
      const rest = Object.fromEntries(Object.entries(record.fields).filter(([k]) => !columns.includes(k)));
      return csvLine([record.ref, name, date, verified, ...columns.map((c) => record.fields[c]), Object.keys(rest).length ? rest : '']);
    },
    end: ({ rows, complete, reason }) => csvLine(['#end', `rows=${rows}; complete=${complete}${reason ? `; reason=${reason}` : ''}`, ...Array(FACTS.length + columns.length - 1).fill('')]),
  };
}

/** JSON lines: `{ref, source, fields}` a row, then `{"end": {rows, complete, reason}}`. */
function jsonlWriter(): Writer {
  return {
    header: () => '',
    row: (record) => `${JSON.stringify({ ref: record.ref, source: originOf(record), fields: record.fields })}\n`,
    end: (end) => `${JSON.stringify({ end })}\n`,
  };
}

// ---- reading ----------------------------------------------------------------------------------

export interface ExportJob {
  source: SearchSource;
  query: TypedValue;
  format: ExportFormat;
  /** Rows at most (the plan's export_rows). */
  cap: number;
  /** Each page's limit (SEARCH_SOURCE_TIMEOUT_MS). */
  pageTimeoutMs: number;
  /** Told how the export ended (the audit line), once, when its stream closes. */
  done(end: ExportEnd): void;
}

type Page = { records: SourceRecord[] } | { stop: ExportStop };

async function readPage(job: ExportJob, offset: number, limit: number): Promise<Page> {
  const signal = AbortSignal.timeout(job.pageTimeoutMs);
  try {
    const answer = await untilAborted(job.source.search(job.query, { signal, limit, offset }), signal);
    return answer ? { records: answer.value.records } : { stop: 'timed_out' };
  } catch {
    return { stop: 'failed' };
  }
}

/**
 * The rows after the first page, a page at a time, as the stream is read. A page is read only when
 * the client has taken the previous one; the data version is checked after each page, and a page
 * read over changed data is not written.
 */
interface Progress { rows: number; end: ExportEnd | null }

async function* rows(job: ExportJob, writer: Writer, first: Page, version: string | null, progress: Progress): AsyncGenerator<string> {
  const started = Date.now();
  let page = 'records' in first ? first.records : [];
  let offset = 0;
  let reason: ExportStop | null = 'stop' in first ? first.stop : null;
  yield writer.header(page);
  while (reason === null) {
    // Past the cap by one row: another row is there, so the cap cut the export.
    const room = job.cap - progress.rows;
    if (page.length > room) reason = 'cap';
    const take = page.slice(0, room);
    yield take.map((r) => writer.row(r)).join('');
    progress.rows += take.length;
    if (reason || page.length < EXPORT_PAGE_ROWS) break;
    offset += EXPORT_PAGE_ROWS;
    if (Date.now() - started > EXPORT_MAX_MS) { reason = 'time_limit'; break; }
    const next = await readPage(job, offset, Math.min(EXPORT_PAGE_ROWS, room - take.length + 1));
    if ('stop' in next) { reason = next.stop; break; }
    if ((job.source.dataVersion?.() ?? null) !== version) { reason = 'data_changed'; break; }
    page = next.records;
  }
  progress.end = { rows: progress.rows, complete: reason === null, reason };
  yield writer.end(progress.end);
}

/**
 * Answers the export: the first page is read before anything is sent (its rows name the CSV
 * columns), then the rows stream. A source that cannot answer, or whose first page fails, gives an
 * export of no rows whose trailer says why, as a search reports such a source in `data`. `release`
 * is called when the stream closes (ended, failed or the client gone).
 */
export async function sendExport(ctx: Context, job: ExportJob, release: () => void): Promise<void> {
  const { source, query } = job;
  const version = source.dataVersion?.() ?? null;
  let first: Page = { records: [] };
  if (source.unavailable()) first = { stop: 'unavailable' };
  else if (asks(source, query)) first = await readPage(job, 0, Math.min(EXPORT_PAGE_ROWS, job.cap + 1));
  const writer = job.format === 'csv' ? csvWriter() : jsonlWriter();
  // Bytes, not objects: the stream reads the next page only once ~16 KB are left unsent.
  const progress: Progress = { rows: 0, end: null };
  const stream = Readable.from(rows(job, writer, first, version, progress), { objectMode: false });
  const stalled = setTimeout(() => ctx.res.destroy(), STALLED_MS);
  stalled.unref();
  stream.once('close', () => {
    clearTimeout(stalled);
    release();
    job.done(progress.end ?? { rows: progress.rows, complete: false, reason: 'disconnected' });
  });
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Content-Disposition', `attachment; filename="search-${query.type}.${job.format}"`);
  ctx.set('X-Export-Limit', String(job.cap));
  ctx.type = job.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson';
  ctx.body = stream;
}
