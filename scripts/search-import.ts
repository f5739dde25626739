// Imports search data files into PostgreSQL for the search service (SEARCH_DATABASE_URL): one
// JSONL/CSV file, or every data file under a folder. Unchanged files are skipped, changed ones
// replace their rows; running services see each file as soon as it is in. Progress goes to
// stderr (a bar on a terminal, a line every few seconds otherwise), log lines to stdout.
//   SEARCH_DATABASE_URL=postgres://... npm run search-import -- <file or folder> [--workers N]
//   SEARCH_DATABASE_URL=postgres://... npm run search-import -- --remove NAME...   (names as /health lists them)
import os from 'node:os';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../api/config.ts';
import { Importer, type FileOutcome, type FileProgress } from '../api/search/pg/import.ts';
import { createLogger } from '../shared/log.ts';

const USAGE = `usage: SEARCH_DATABASE_URL=postgres://... search-import <file or folder> [--workers N]
       SEARCH_DATABASE_URL=postgres://... search-import --remove NAME...`;
/** How often progress is drawn on a terminal, and written as a line elsewhere. */
const BAR_EVERY_MS = 200;
const LINE_EVERY_MS = 5000;

const count = (n: number) => Math.round(n).toLocaleString('en-US');
function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/** Rate, share done and time left of a file's import. */
function measure(p: FileProgress) {
  const seconds = (performance.now() - p.startedAt) / 1000;
  const share = p.lines ? Math.min(1, p.linesDone / p.lines) : 1;
  return { share, perSecond: seconds > 0 ? p.rows / seconds : 0, eta: share > 0 ? (seconds / share) * (1 - share) : Infinity };
}

/** Draws the progress: a bar redrawn in place on a terminal, plain lines otherwise. */
function progressWriter(stream: NodeJS.WriteStream) {
  let last = 0;
  let drawn = false;
  return {
    update(p: FileProgress): void {
      const now = performance.now();
      if (now - last < (stream.isTTY ? BAR_EVERY_MS : LINE_EVERY_MS)) return;
      last = now;
      const { share, perSecond, eta } = measure(p);
      const percent = `${Math.floor(share * 100)}%`;
      if (stream.isTTY) {
        const width = 24;
        const filled = Math.round(share * width);
        stream.write(`\r\x1b[K${p.file} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${percent.padStart(4)}  ${count(p.rows)} rows  ${count(perSecond)} rows/s  ETA ${duration(eta)}`);
        drawn = true;
      } else {
        stream.write(`${p.file}: ${percent} (${count(p.rows)} rows), ${count(perSecond)} rows/s, ETA ${duration(eta)}\n`);
      }
    },
    /** Ends the bar's line before anything else is written. */
    clear(): void {
      if (drawn) stream.write('\r\x1b[K');
      drawn = false;
      last = 0;
    },
  };
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { workers: { type: 'string' }, remove: { type: 'boolean' } }, allowPositionals: true, strict: true });
  const workers = values.workers === undefined ? os.availableParallelism() : Number(values.workers);
  if ((values.remove ? positionals.length < 1 : positionals.length !== 1) || !Number.isInteger(workers) || workers < 0 || workers > 64) {
    console.error(USAGE);
    return 64;
  }
  const config = loadConfig();
  const { databaseUrl, defaultRegion } = config.search;
  if (!databaseUrl) {
    console.error(`SEARCH_DATABASE_URL is not set\n${USAGE}`);
    return 78;
  }
  const progress = progressWriter(process.stderr);
  const write = (line: string) => {
    progress.clear();
    process.stdout.write(line);
  };
  const log = createLogger(config.logLevel, {}, write, config.logFormat);
  let rows = 0;
  const onFile = (outcome: FileOutcome) => {
    if (outcome.outcome !== 'imported') {
      log[outcome.outcome === 'failed' ? 'error' : outcome.outcome === 'not_imported' ? 'warn' : 'info']('search import file', { ...outcome });
      return;
    }
    const { stats, values: typed, ms } = outcome;
    const read = stats.rows_indexed + stats.rows_skipped;
    rows += read;
    log.info('search import file', { ...stats, outcome: 'imported', values: typed, ms, rows_per_s: Math.round(read / (ms / 1000)) });
  };
  const importer = new Importer({ databaseUrl, region: defaultRegion, workers: values.remove ? 0 : workers, log, onProgress: (p) => progress.update(p), onFile });
  const started = performance.now();
  let outcomes: FileOutcome[];
  try {
    outcomes = values.remove ? await importer.remove(positionals) : await importer.run(positionals[0]);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    log.error('search import failed', { err: code === 'ENOENT' ? (error as Error).message : error });
    return code === 'ENOENT' ? 66 : 1;
  } finally {
    await importer.close();
  }
  const ms = Math.round(performance.now() - started);
  const tally = (kind: FileOutcome['outcome']) => outcomes.filter((o) => o.outcome === kind).length;
  log.info('search import done', { imported: tally('imported'), unchanged: tally('unchanged'), facts_updated: tally('facts_updated'), removed: tally('removed'), failed: tally('failed'), rows, ms, rows_per_s: Math.round(rows / (ms / 1000)) });
  return tally('failed') ? 1 : 0;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exitCode = 78;
  } else {
    console.error((error as Error).message);
    process.exitCode = 64;
  }
}
