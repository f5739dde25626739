// The readers of the operator's data files are bounded: a quote never closed, a CSV record or a
// JSONL line of megabytes is one counted row problem (logged with its file and line), read in time
// proportional to the file, and the rows after it are read. Both backends read through the same
// reader: the in-memory index and `npm run search-import` into PostgreSQL count alike.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { MAX_RECORD_LINES, MAX_ROW_BYTES, readRows } from '../api/search/index/files.ts';
import { LocalIndex } from '../api/search/index/local-index.ts';
import { createDatabase, fileOutcomes, runImport } from './helpers/postgres.ts';

const ROWS_AFTER = MAX_RECORD_LINES * 3;
const row = (i: number) => `user${i},user${i}@example.org,+1 202 555 ${String(i % 10_000).padStart(4, '0')}`;
/** A CSV whose second line opens a quote that never closes, then rows until it holds `bytes`. */
const strayQuote = (bytes: number) => {
  const lines = ['login,email,phone', 'stray,"never closed,+1 202 555 0100'];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    lines.push(row(i));
    size += lines.at(-1)!.length + 1;
  }
  return `${lines.join('\n')}\n`;
};
const BIG = 'x'.repeat(MAX_ROW_BYTES * 2);

let dir: string;
test.before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-readers-'));
  const lines = ['login,email,phone', 'stray,"never closed,+1 202 555 0100'];
  for (let i = 0; i < ROWS_AFTER; i++) lines.push(row(i));
  await fs.writeFile(path.join(dir, 'stray.csv'), `${lines.join('\n')}\n`);
  // A quote left open a few lines before the end: the rows after it are not swallowed.
  await fs.writeFile(path.join(dir, 'late.csv'), ['login,email', 'a1,a1@example.org', 'a2,"a2@example.org', 'a3,a3@example.org', 'a4,a4@example.org', ''].join('\r\n'));
  // One CSV line and one JSONL line of 2 MiB: never held whole, one problem each.
  await fs.writeFile(path.join(dir, 'wide.csv'), `login,email,note\nwide,wide@example.org,"${BIG}"\nafter_wide,after.wide@example.org,ok\n`);
  await fs.writeFile(path.join(dir, 'huge.jsonl'), `${JSON.stringify({ email: 'huge@example.org', note: BIG })}\n${JSON.stringify({ email: 'after.huge@example.org' })}\n`);
  // A quoted cell over the byte cap spread over lines of 256 KiB.
  const chunk = 'y'.repeat(256 * 1024);
  await fs.writeFile(path.join(dir, 'tall.csv'), `login,email,note\ntall,tall@example.org,"${Array(8).fill(chunk).join('\n')}"\nafter_tall,after.tall@example.org,ok\n`);
});
test.after.always(() => dir && fs.rm(dir, { recursive: true, force: true }));

const EXPECTED = {
  'stray.csv': { rows_indexed: ROWS_AFTER, rows_skipped: 1, last_error: `line 2: record over ${MAX_RECORD_LINES} lines (a quote not closed?)` },
  'late.csv': { rows_indexed: 3, rows_skipped: 1, last_error: 'line 3: unclosed quote' },
  'wide.csv': { rows_indexed: 1, rows_skipped: 1, last_error: `line 2: record over ${MAX_ROW_BYTES} bytes` },
  'huge.jsonl': { rows_indexed: 1, rows_skipped: 1, last_error: `line 1: line over ${MAX_ROW_BYTES} bytes` },
};

test.serial('in memory: a stray quote or an oversized record is one counted problem, and the rows after it are read', async (t) => {
  const problems: Array<{ file: string; line: number | null; reason: string }> = [];
  const index = await LocalIndex.build(dir, { onProblem: (p) => problems.push(p) });
  const byFile = Object.fromEntries(index.stats.data_files.map((f) => [f.file, f]));
  for (const [file, expected] of Object.entries(EXPECTED)) t.like(byFile[file], expected, file);
  t.deepEqual(problems.filter((p) => p.file !== 'tall.csv').map((p) => `${p.file}:${p.line}`), ['huge.jsonl:1', 'late.csv:3', 'stray.csv:2', 'wide.csv:2']);
  t.is(index.find({ type: 'email', value: 'user0@example.org' }, 10).hits[0]?.ref, 'stray.csv:3');
  t.is(index.find({ type: 'email', value: `user${ROWS_AFTER - 1}@example.org` }, 10).hits[0]?.ref, `stray.csv:${ROWS_AFTER + 2}`);
  t.is(index.find({ type: 'email', value: 'a4@example.org' }, 10).hits[0]?.ref, 'late.csv:5');
  t.is(index.find({ type: 'email', value: 'after.wide@example.org' }, 10).total, 1);
  t.is(index.find({ type: 'email', value: 'after.huge@example.org' }, 10).total, 1);
  t.is(index.find({ type: 'email', value: 'huge@example.org' }, 10).total, 0);
  // The quoted cell that outgrew the byte cap is its first line's problem; its row is not indexed,
  // its other lines are read as rows of their own (each a counted problem), and the next row is read.
  t.like(problems.find((p) => p.file === 'tall.csv'), { line: 2, reason: `record over ${MAX_ROW_BYTES} bytes (a quote not closed?)` });
  t.is(index.find({ type: 'email', value: 'tall@example.org' }, 10).total, 0);
  t.is(index.find({ type: 'email', value: 'after.tall@example.org' }, 10).hits[0]?.ref, 'tall.csv:10');
});

test.serial('npm run search-import reads the same files through the same reader: the same counts, problems logged with file and line', async (t) => {
  const db = await createDatabase();
  t.teardown(() => db.drop());
  const run = await runImport(db.url, dir);
  t.is(run.code, 0, run.stderr);
  const outcomes = fileOutcomes(run);
  for (const [file, expected] of Object.entries(EXPECTED)) t.like(outcomes[file], { outcome: 'imported', ...expected }, file);
  t.like(run.logs.find((l) => l.msg === 'search data problem' && l.file === 'stray.csv'), { line: 2, reason: `record over ${MAX_RECORD_LINES} lines (a quote not closed?)` });
  const [{ n }] = await db.query<{ n: string }>("SELECT count(*) AS n FROM search_rows WHERE body::jsonb->>'email' = $1", [`user${ROWS_AFTER - 1}@example.org`]);
  t.is(Number(n), 1);
});

test.serial('a quote never closed costs work in proportion to the file: four times the file, not sixteen times the CPU', async (t) => {
  const own = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-readers-linear-'));
  t.teardown(() => fs.rm(own, { recursive: true, force: true }));
  const small = path.join(own, 'small.csv');
  const large = path.join(own, 'large.csv');
  await fs.writeFile(small, strayQuote(512 * 1024));
  await fs.writeFile(large, strayQuote(4 * 512 * 1024));
  const read = async (file: string) => {
    const before = process.cpuUsage();
    let rows = 0;
    let problems = 0;
    for await (const r of readRows(file)) {
      if ('error' in r) problems += 1;
      else rows += 1;
    }
    const used = process.cpuUsage(before);
    return { rows, problems, cpu: used.user + used.system };
  };
  await read(small); // warm up the code paths
  const a = await read(small);
  const b = await read(large);
  t.is(a.problems, 1);
  t.is(b.problems, 1);
  t.true(b.rows > 3.5 * a.rows, `${a.rows} and ${b.rows} rows`);
  // Quadratic reading (the pending text split again on every line) costs 16 times as much.
  t.true(b.cpu < 4 * 3 * a.cpu, `small ${a.cpu} µs, large ${b.cpu} µs`);
});
