// Synthetic people records for the search service: invented names, example.org / example.net
// addresses, NANP 555-01xx numbers, TEST-NET and 2001:db8:: addresses. No real person's data.
//   node scripts/search-data.ts --out data/search/sample.jsonl --records 10000 [--seed 1]
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { readPhone } from '../api/search/values/phone.ts';

/** Area code kept out of generated data, so tests can plant numbers that nothing else holds. */
export const RESERVED_AREA_CODE = 202;

/** A small seeded generator (xorshift32): the same seed gives the same data set. */
export function seededRandom(seed: number): () => number {
  let state = (seed >>> 0) || 0x9e3779b9;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
}

const LATIN = ['ba', 'ce', 'di', 'fo', 'ga', 'ha', 'ji', 'ka', 'le', 'mo', 'na', 'pe', 'ri', 'sa', 'to', 'vu', 'ze', 'lo', 'mi', 'ra'];
const CYRILLIC = ['ба', 'ве', 'ди', 'го', 'жа', 'за', 'ки', 'ла', 'ме', 'но', 'пи', 'ро', 'са', 'ту', 'фе', 'ша'];
const LATIN_TRANSLIT: Record<string, string> = { ба: 'ba', ве: 've', ди: 'di', го: 'go', жа: 'zha', за: 'za', ки: 'ki', ла: 'la', ме: 'me', но: 'no', пи: 'pi', ро: 'ro', са: 'sa', ту: 'tu', фе: 'fe', ша: 'sha' };
const CITIES = ['Northvale', 'Eastbrook', 'Lakemoor', 'Redfield', 'Stonebury', 'Westhaven'];
// Registered vendor prefixes (a few well-known ones); the rest of each address is random.
const OUIS = ['000C29', '001A11', '00163E', '3C5AB4', 'F4F5D8', '00005E', 'B827EB', 'DCA632'];

let areaCodes: number[] | null = null;
/** NANP area codes whose 555-01xx numbers the phone library accepts, minus the reserved one. */
function validAreaCodes(): number[] {
  areaCodes ??= Array.from({ length: 800 }, (_, i) => 200 + i).filter((npa) => npa !== RESERVED_AREA_CODE && readPhone(`+1 ${npa} 555 0100`));
  return areaCodes;
}

export function* syntheticRecords(count: number, seed = 1): Generator<Record<string, unknown>> {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const int = (n: number) => Math.floor(random() * n);
  const hex = (digits: number) => Array.from({ length: digits }, () => int(16).toString(16)).join('');
  const word = (syllables: readonly string[]) => Array.from({ length: 2 + int(2) }, () => pick(syllables)).join('');
  const cap = (w: string) => w[0].toUpperCase() + w.slice(1);
  const codes = validAreaCodes();
  for (let i = 0; i < count; i++) {
    const cyrillic = random() < 0.3;
    const first = word(cyrillic ? CYRILLIC : LATIN);
    const last = word(cyrillic ? CYRILLIC : LATIN);
    const latin = (w: string) => (cyrillic ? [...w.matchAll(/../g)].map((m) => LATIN_TRANSLIT[m[0]]).join('') : w);
    const handle = `${latin(first)}_${latin(last)}${i}`;
    const domain = random() < 0.5 ? 'example.org' : 'example.net';
    const mac = `${pick(OUIS)}${hex(6)}`.toLowerCase().match(/../g)!.join(':');
    const ip = random() < 0.5
      ? `${pick(['192.0.2', '198.51.100', '203.0.113'])}.${int(256)}`
      : `2001:db8:${hex(4)}:${hex(4)}::${hex(4)}`;
    yield {
      id: `person-${i}`,
      full_name: `${cap(first)} ${cap(last)}`,
      email: `${latin(first)}.${latin(last)}.${i}@${domain}`,
      phone: `+1 ${pick(codes)} 555-01${String(int(100)).padStart(2, '0')}`,
      username: handle,
      telegram: `@${handle}`.slice(0, 33),
      social_id: String(100_000_000 + int(900_000_000)),
      ip,
      mac,
      website: `${handle.replaceAll('_', '-')}.${domain}`,
      city: pick(CITIES),
    };
  }
}

/** Writes `records` generated records, then `extra`, as JSONL (streamed: fine for millions). */
/**
 * `count` queries drawn from the first `records` synthetic records (seed `seed`), e-mail, phone,
 * user name and IPv4 by quarters: a benchmark's mix of few-match and many-match values.
 */
export function sampleQueries(records: number, count: number, seed: number): string[] {
  const random = seededRandom(7);
  const wanted = new Set(Array.from({ length: count }, () => Math.floor(random() * records)));
  const queries: string[] = [];
  let i = 0;
  for (const record of syntheticRecords(records, seed)) {
    if (wanted.has(i)) queries.push(String(record[(['email', 'phone', 'username', 'ip'] as const)[queries.length % 4]]));
    i += 1;
  }
  return queries;
}

export async function writeSyntheticData(file: string, records: number, options: { seed?: number; extra?: Array<Record<string, unknown>> } = {}): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const out = createWriteStream(file);
  const write = async (record: Record<string, unknown>) => {
    if (!out.write(`${JSON.stringify(record)}\n`)) await once(out, 'drain');
  };
  for (const record of syntheticRecords(records, options.seed)) await write(record);
  for (const record of options.extra ?? []) await write(record);
  out.end();
  await once(out, 'finish');
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string' }, records: { type: 'string', default: '10000' }, seed: { type: 'string', default: '1' } } });
  const records = Number(values.records);
  if (!values.out || !Number.isInteger(records) || records < 0) {
    console.error('usage: node scripts/search-data.ts --out FILE.jsonl [--records N] [--seed N]');
    process.exit(64);
  }
  await writeSyntheticData(values.out, records, { seed: Number(values.seed) });
  console.log(`wrote ${records} synthetic records to ${values.out}`);
}
