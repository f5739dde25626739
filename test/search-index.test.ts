import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { detectDelimiter, splitCsv } from '../api/search/index/files.ts';
import { LocalIndex } from '../api/search/index/local-index.ts';
import { PostingsBuilder } from '../api/search/index/postings.ts';

test('CSV cells: quotes, doubled quotes, commas and line breaks inside quotes', (t) => {
  t.deepEqual(splitCsv('a,"b,c","say ""hi""",'), ['a', 'b,c', 'say "hi"', '']);
  t.deepEqual(splitCsv('"line one\nline two",x'), ['line one\nline two', 'x']);
  t.is(splitCsv('"open,x'), null);
});

test('postings: every value finds exactly its rows, in insertion order', (t) => {
  const builder = new PostingsBuilder();
  for (let id = 0; id < 50_000; id++) {
    builder.add(`email:user${id}@example.org`, id);
    builder.add(`ip:192.0.2.${id % 256}`, id);
  }
  const postings = builder.build();
  t.deepEqual(postings.find('email:user4242@example.org'), [4242]);
  const shared = postings.find('ip:192.0.2.7');
  t.is(shared.length, Math.ceil((50_000 - 7) / 256));
  t.deepEqual(shared.slice(0, 3), [7, 263, 519]);
  t.deepEqual(postings.find('email:nobody@example.org'), []);
});

test('a folder of JSONL and CSV files: rows from every file, bad rows counted, not fatal', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-index-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  await fs.mkdir(path.join(dir, 'more'));
  await fs.writeFile(path.join(dir, 'people.jsonl'), [
    JSON.stringify({ full_name: 'Ada Example', phone: '+1 202 555 0110', email: 'ada@example.org' }),
    '{not json',
    '',
    JSON.stringify(['not', 'an', 'object']),
    JSON.stringify({ login: 'ada_x', contact: { tel: '(202) 555-0111' } }),
  ].join('\n'));
  await fs.writeFile(path.join(dir, 'more', 'devices.csv'), 'owner,mac,note\n"Ada Example",00-00-5E-00-53-01,"first, with comma"\nBob Example,00:00:5e:00:53:02,"two\nlines"\nshort\n');
  await fs.writeFile(path.join(dir, 'readme.txt'), 'not data');

  const index = await LocalIndex.build(dir);
  t.like(index.stats, { files: 2, records: 4, malformed: 3 });
  t.deepEqual(index.stats.problems, ['more/devices.csv:5: 1 cells for 3 columns', 'people.jsonl:2: not JSON', 'people.jsonl:4: not a JSON object']);

  const byPhone = index.find({ type: 'phone', value: '+12025550111' }, 10);
  t.is(byPhone.total, 1);
  t.is(byPhone.hits[0].ref, 'people.jsonl:5');
  const byMac = index.find({ type: 'mac', value: '00:00:5e:00:53:02' }, 10);
  t.is(byMac.hits[0].ref, 'more/devices.csv:3');
  t.like(byMac.hits[0].record, { owner: 'Bob Example', note: 'two\nlines' });
  // "owner" does not name a type, so a name there is kept but not indexed.
  t.is(index.find({ type: 'fio', value: 'Bob Example' }, 10).total, 0);
  t.is(index.find({ type: 'fio', value: 'Ada Example' }, 10).total, 1);
});

test('CSV as spreadsheets write it: ; and tab delimiters, a byte order mark, Excel\'s sep= line', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-index-csv-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const BOM = '\uFEFF';
  await fs.writeFile(path.join(dir, 'de.csv'), `${BOM}Name;E-Mail;Telefon\r\n"Muster, Erika";erika@example.org;+49 30 1234567\r\n`);
  await fs.writeFile(path.join(dir, 'ru.tsv'), 'fio\temail\nИванов И. И.\tivanov@example.net\n');
  await fs.writeFile(path.join(dir, 'hint.csv'), 'sep=;\nlogin;email\nada_x;ada.x@example.org\n');
  await fs.writeFile(path.join(dir, 'bom.jsonl'), `${BOM}${JSON.stringify({ email: 'first.row@example.org' })}\n`);

  const index = await LocalIndex.build(dir);
  t.like(index.stats, { files: 4, records: 4, malformed: 0 });
  t.like(index.find({ type: 'email', value: 'erika@example.org' }, 10).hits[0]?.record, { Name: 'Muster, Erika', Telefon: '+49 30 1234567' });
  t.is(index.find({ type: 'phone', value: '+49301234567' }, 10).total, 1);
  t.is(index.find({ type: 'fio', value: 'Иванов И. И.' }, 10).total, 1);
  t.is(index.find({ type: 'email', value: 'ada.x@example.org' }, 10).total, 1);
  t.is(index.find({ type: 'email', value: 'first.row@example.org' }, 10).total, 1);
  t.deepEqual(detectDelimiter('a,b;c;d'), ';');
  t.deepEqual(detectDelimiter('"a;b",c'), ',');
  t.deepEqual(detectDelimiter('single'), ',');
});

test('a bad value costs nothing but itself; every skip is counted per file with its line', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-index-poison-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  await fs.writeFile(path.join(dir, 'net.jsonl'), [
    JSON.stringify({ host: 'router-1.example.org', ip: 'fe80::1%eth0.100', email: 'net.admin@example.org' }),
    JSON.stringify({ note: 'ff02::5678%pvc1.3', phone: 'not a number', login: 'ops_x' }),
    '{broken',
  ].join('\n'));
  const problems: Array<{ file: string; line: number | null; reason: string }> = [];
  const index = await LocalIndex.build(dir, { onProblem: (p) => problems.push(p) });
  t.like(index.stats, { records: 2, malformed: 1 });
  t.like(index.stats.data_files[0], { file: 'net.jsonl', rows_indexed: 2, rows_skipped: 1, values_rejected: 1, last_error: 'line 3: not JSON' });
  t.deepEqual(problems.map((p) => `${p.file}:${p.line}`), ['net.jsonl:2', 'net.jsonl:3']);
  t.regex(problems[0].reason, /phone is not a valid phone/);
  t.is(index.find({ type: 'ip', value: 'fe80::1' }, 10).total, 1);
  t.is(index.find({ type: 'ip', value: 'ff02::5678' }, 10).total, 1);
  t.is(index.find({ type: 'email', value: 'net.admin@example.org' }, 10).total, 1);
});

test('numbers stored in national form are found by their E.164 form, read in the given region', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-index-region-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  await fs.writeFile(path.join(dir, 'cn.csv'), 'name,mobile\nWang Xiaoming,131 2345 6789\n');
  const cn = await LocalIndex.build(dir, { region: 'CN' });
  t.is(cn.find({ type: 'phone', value: '+8613123456789' }, 10).total, 1);
  // Read as US (the default), the same digits would link a Chicago number instead.
  const us = await LocalIndex.build(dir);
  t.is(us.find({ type: 'phone', value: '+8613123456789' }, 10).total, 0);
  t.is(us.find({ type: 'phone', value: '+13123456789' }, 10).total, 1);
});
