// Export (format=csv|jsonl) on both backends: every one of 10,050 rows streamed with its source
// facts, the same from memory and PostgreSQL; the CSV read back by the project's own RFC 4180
// reader, a formula cell neutralised; the plan's cap and its trailer; a plan without export refused.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { readRows } from '../api/search/index/files.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';
import { createSearchKey } from './helpers/search-keys.ts';
import { SHARED_EMAIL, sharedName, startBackends, type Backends } from './helpers/search-backends.ts';
import { until } from './helpers/poll.ts';

const FORMULA = '=HYPERLINK("http://evil.example","click")';
const ODD_NOTE = 'a "quoted" word, a comma\nand a line break';
// 10,048 shared rows and two more holding the e-mail: 10,050 in all.
const EXTRA = [{ full_name: FORMULA, email: SHARED_EMAIL, row: 10_048 }, { full_name: 'Odd Note', email: SHARED_EMAIL, row: 10_049, note: ODD_NOTE }];
const ROWS = 10_050;
let b: Backends;
let premium: string;
let basic: string;
let capped: string;

test.before(async () => {
  b = await startBackends('search-export', ROWS - EXTRA.length, {}, EXTRA);
  premium = createSearchKey(b.dataDir, 'export-premium', '--plan', 'premium');
  basic = createSearchKey(b.dataDir, 'export-basic');
  capped = createSearchKey(b.dataDir, 'export-capped', '--export-rows', '25');
});
test.after.always(async () => {
  await b?.stop();
});

/** An export as a client downloads it (fetch: the JSON lines are not one JSON document). */
async function download(app: RunningApp, format: string, key = premium, query = SHARED_EMAIL) {
  const r = await fetch(`${app.urls.search}/v1/search?${new URLSearchParams({ query, type: 'email', format })}`, { headers: { 'x-api-key': key } });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

const jsonLines = (text: string) => text.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, any>);

test('jsonl streams every row once with its source facts, then a trailer; the same from both backends', async (t) => {
  const texts: string[] = [];
  for (const [name, app] of b.both) {
    const r = await download(app, 'jsonl');
    t.is(r.status, 200, name);
    t.is(r.headers.get('content-type'), 'application/x-ndjson');
    t.is(r.headers.get('content-disposition'), 'attachment; filename="search-email.jsonl"');
    t.is(r.headers.get('x-export-limit'), '100000');
    const lines = jsonLines(r.text);
    t.deepEqual(lines.at(-1), { end: { rows: ROWS, complete: true, reason: null } }, name);
    const rows = lines.slice(0, -1);
    t.is(rows.length, ROWS);
    t.deepEqual(rows.map((l) => l.fields.row), Array.from({ length: ROWS }, (_, i) => i), `${name}: each row once, in order`);
    t.like(rows[0], { ref: 'people.jsonl:201', fields: { full_name: sharedName(0), email: SHARED_EMAIL } });
    t.is(typeof rows[0].source.name, 'string');
    t.true('date' in rows[0].source && 'verified' in rows[0].source);
    texts.push(r.text);
  }
  t.is(texts[1], texts[0]);
});

test('csv: a header, every row (read back by the RFC 4180 reader), a formula cell neutralised, other fields in `other`', async (t) => {
  const texts: string[] = [];
  for (const [name, app] of b.both) {
    const r = await download(app, 'csv');
    t.is(r.status, 200, name);
    t.is(r.headers.get('content-type'), 'text/csv; charset=utf-8');
    t.is(r.headers.get('content-disposition'), 'attachment; filename="search-email.csv"');
    const file = path.join(b.dir, `export-${name}.csv`);
    await fs.writeFile(file, r.text);
    const records: Array<Record<string, unknown>> = [];
    for await (const row of readRows(file)) {
      if ('error' in row) t.fail(`${name}: line ${row.line}: ${row.error}`);
      else records.push(row.record);
    }
    t.is(r.text.slice(0, r.text.indexOf('\r\n')), '"ref","source_name","source_date","source_verified","full_name","email","row","other"');
    const trailer = records.at(-1)!;
    t.is(trailer.ref, '#end');
    t.is(trailer.source_name, `rows=${ROWS}; complete=true`);
    const rows = records.slice(0, -1);
    t.is(rows.length, ROWS);
    t.deepEqual(rows.map((r) => Number(r.row)), Array.from({ length: ROWS }, (_, i) => i));
    const formula = rows.find((r) => Number(r.row) === 10_048)!;
    t.is(formula.full_name, `'${FORMULA}`, 'a spreadsheet shows it as text, not a formula');
    const odd = rows.find((r) => Number(r.row) === 10_049)!;
    t.deepEqual(JSON.parse(odd.other as string), { note: ODD_NOTE });
    // (The reader leaves empty cells out.)
    t.falsy(rows[0].other);
    texts.push(r.text);
  }
  t.is(texts[1], texts[0]);
});

test('the plan\'s export cap ends the stream, and its trailer says so', async (t) => {
  for (const [name, app] of b.both) {
    const r = await download(app, 'jsonl', capped);
    t.is(r.status, 200, name);
    t.is(r.headers.get('x-export-limit'), '25');
    const lines = jsonLines(r.text);
    t.is(lines.length, 26);
    t.deepEqual(lines.at(-1), { end: { rows: 25, complete: false, reason: 'cap' } }, name);
    // A value of fewer rows than the cap is complete.
    const one = jsonLines((await download(app, 'jsonl', capped, 'nobody.at.all@example.net')).text);
    t.deepEqual(one, [{ end: { rows: 0, complete: true, reason: null } }]);
  }
});

test('a plan without export is refused 403; paging parameters do not apply to an export', async (t) => {
  for (const [name, app] of b.both) {
    const refused = await call(`${app.urls.search}/v1/search?${new URLSearchParams({ query: SHARED_EMAIL, type: 'email', format: 'csv' })}`, { headers: { 'x-api-key': basic } });
    t.is(refused.status, 403, name);
    t.is(refused.json.error.code, 'forbidden');
    t.regex(refused.json.error.message, /no export/);
    const paged = await call(`${app.urls.search}/v1/search`, {
      method: 'POST', headers: { 'x-api-key': premium, 'content-type': 'application/json' }, body: JSON.stringify({ query: SHARED_EMAIL, type: 'email', format: 'jsonl', offset: 5 }),
    });
    t.is(paged.status, 400);
    t.regex(paged.json.error.message, /offset/);
  }
});

test('an export is one search in the audit log, saying how it ended', async (t) => {
  await download(b.postgres, 'jsonl', capped);
  // Written when the stream closes, just after the last byte.
  const audit = () => Promise.resolve(b.postgres.logs.filter((l) => l.msg === 'search audit' && l.export === 'jsonl'));
  const lines = await until('the export\'s audit line', audit, (found) => found.length > 0);
  t.like(lines[0], { count: 25, complete: false, reason: 'cap', timed_out: false });
  t.is(typeof lines[0].query_hmac, 'string');
});

test('without data to read, an export holds no rows and its trailer says the source is unavailable', async (t) => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-export-no-data-'));
  const app = await startApp({ SERVICES: 'search', DATA_DIR: dataDir });
  try {
    const key = createSearchKey(dataDir, 'no-data', '--plan', 'premium');
    const jsonl = await download(app, 'jsonl', key);
    t.is(jsonl.status, 200);
    t.deepEqual(jsonLines(jsonl.text), [{ end: { rows: 0, complete: false, reason: 'unavailable' } }]);
    const csv = await download(app, 'csv', key);
    t.is(csv.status, 200);
    t.regex(csv.text, /"#end","rows=0; complete=false; reason=unavailable"/);
  } finally {
    await app.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});
