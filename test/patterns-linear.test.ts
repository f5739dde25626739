// Every parser of client text runs in time linear in its input (issue 26: the phone extension
// pattern backtracked over a run of spaces, 65 ms of CPU for one 512-character query). Growth is
// measured, not time: each parser's cost at one size against its own cost at the size before, in
// this process, so a faster, slower or busier machine changes both sides alike.
import test from 'ava';
import ipaddr from 'ipaddr.js';
import type { Context } from 'koa';
import { clientAddress, requestOrigin } from '../api/http/client-address.ts';
import { readParams, type Param } from '../api/http/params.ts';
import { describedRoutes } from '../api/docs/openapi.ts';
import { ROUTE_TABLES } from '../api/route-tables.ts';
import { parseRange } from '../api/media/file-response.ts';
import { readAccept, splitExtension } from '../api/skins/image-format.ts';
import { parseSelection } from '../api/media/selector.ts';
import { TokenSigner } from '../api/media/token.ts';
import { detect, parseQuery } from '../api/search/detect.ts';
import { normalise } from '../api/search/normalise.ts';
import { SEARCH_TYPES } from '../api/search/types.ts';
import { parseDomain } from '../api/search/values/domain.ts';
import { parseEmail } from '../api/search/values/email.ts';
import { parseIp } from '../api/search/values/ip.ts';
import { looksLikeNationalPhone, parseRegion, readPhone } from '../api/search/values/phone.ts';

/**
 * The sizes measured, each allowed OVER_LINEAR times the growth a linear parser shows from the
 * size before: at most 30x from 1,000 to 10,000 characters, where a quadratic pattern grows 100x.
 * The doublings first, so a cubic pattern (8x each) fails before 10,000 characters take minutes.
 */
const SIZES = [250, 500, 1000, 10_000];
const OVER_LINEAR = 3;

const run = (unit: string) => (n: number) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
/**
 * A label of distinct letters (punycode's cost grows with a label's length times its distinct
 * letters), then ASCII: the library refuses to convert more than about 5,000 of them.
 */
const distinctLetters = (n: number) => {
  const letters = Array.from({ length: Math.floor(n / 4) }, (_, i) => String.fromCharCode(0x4e00 + i)).join('');
  return `${letters}.${'a'.repeat(n - letters.length - 1)}`;
};

// What the patterns repeat: runs of one character, and alternations of the characters a pattern
// takes on both sides of a quantifier (a digit and a space, a letter and a dot...).
const RUNS: Record<string, (n: number) => string> = {
  'spaces between digits': (n) => `1${' '.repeat(n - 2)}1`,
  spaces: run(' '),
  tabs: run('\t'),
  digits: run('1'),
  dots: run('.'),
  'at signs': run('@'),
  dashes: run('-'),
  hashes: run('#'),
  commas: run(','),
  colons: run(':'),
  'angle brackets': run('<'),
  'square brackets': run('['),
  'digit, space': run('1 '),
  'digit, dot': run('1.'),
  'digit, colon': run('1:'),
  'digit, dash': run('1-'),
  'hex pair, colon': run('0a:'),
  'letter, dot': run('a.'),
  'letter, dash': run('a-'),
  'letter, at': run('a@'),
  'letter, apostrophe': run("a'"),
  'word, space': run('ab '),
  'initial, dot': run('A.'),
  'extension marker, space': run('x '),
  'extension and digits': run(' ext 1'),
  'separator, space': run(', '),
  'escaped quotes': (n) => `"${run('\\"')(n - 1)}`,
  'cyrillic, hyphen': run('д-'),
  'han characters': run('王'),
  'distinct letters': distinctLetters,
  'hex, dash': run('0a-'),
  'dotted quads': run('1.1.1.1,'),
  'tel: parameters': (n) => `tel:+1234;${run('a')(n - 10)}`,
  'mailto: link': (n) => `mailto:${run('a.')(n - 7)}`,
  'url host': (n) => `https://${run('a.')(n - 8)}`,
  'url host of distinct letters': (n) => `https://${distinctLetters(n - 8)}`,
  'range bytes': (n) => `bytes=${run('1')(n - 6)}`,
};
// Each also ending in a character nothing takes, where a backtracking pattern tries every split.
const INPUTS = Object.entries(RUNS).flatMap(([name, make]): Array<[string, (n: number) => string]> =>
  [[name, make], [`${name}, then !`, (n) => `${make(n - 1)}!`]]);

type Parse = (text: string) => unknown;

/**
 * Microseconds a call takes: the least of a few rounds after a warm-up call. Rounds are short at
 * every size, so that the machine's other work, which only adds, misses some of them alike.
 */
function cost(parse: Parse, text: string, reps: number): number {
  parse(text);
  let best = Infinity;
  let spent = 0;
  for (let round = 0; round < 7 && spent < 300; round += 1) {
    const started = performance.now();
    for (let i = 0; i < reps; i += 1) parse(text);
    const ms = performance.now() - started;
    spent += ms;
    best = Math.min(best, (ms * 1000) / reps);
  }
  return best;
}

/** Calls that make a round of about half a millisecond for each size (for a linear parser). */
function repetitions(parse: Parse, texts: string[]): number[] {
  parse(texts[0]);
  const started = performance.now();
  parse(texts[0]);
  const first = 0.5 / Math.max(performance.now() - started, 1e-4);
  return SIZES.map((n) => Math.max(1, Math.min(10_000, Math.round((first * SIZES[0]) / n))));
}

/** Attempts a growth past the budget must show before it counts: a busy moment is no pattern. */
const ATTEMPTS = 3;

/** How the cost grew past the budget from one size to the next, or null when it stayed within it. */
async function overgrowth(parse: Parse, make: (n: number) => string): Promise<string | null> {
  const texts = SIZES.map(make);
  const reps = repetitions(parse, texts);
  let previous = cost(parse, texts[0], reps[0]);
  for (let i = 1; i < SIZES.length; i += 1) {
    const allowed = (OVER_LINEAR * SIZES[i]) / SIZES[i - 1];
    let current = cost(parse, texts[i], reps[i]);
    for (let attempt = 1; attempt < ATTEMPTS && current / previous > allowed; attempt += 1) {
      await new Promise(setImmediate);
      previous = cost(parse, texts[i - 1], reps[i - 1]);
      current = cost(parse, texts[i], reps[i]);
    }
    if (current / previous > allowed) return `${(current / previous).toFixed(1)}x from ${SIZES[i - 1]} to ${SIZES[i]} characters (${previous.toFixed(1)} µs at ${SIZES[i - 1]})`;
    previous = current;
  }
  return null;
}

/** The first input a parser grows too fast on; the rest are not tried (each takes seconds on a super-linear parser). */
async function superLinear(parse: Parse): Promise<string | null> {
  const quiet = (text: string) => {
    try {
      parse(text);
    } catch {
      // Refusing the text (an ApiError) is an answer like any other.
    }
  };
  for (const [name, make] of INPUTS) {
    const over = await overgrowth(quiet, make);
    if (over) return `${name}: ${over}`;
    // Measurements are synchronous: let the test runner hear from this worker between them.
    await new Promise(setImmediate);
  }
  return null;
}

const contextOf = (fields: { query?: Record<string, string>; params?: Record<string, string>; headers?: Record<string, string> }) =>
  ({ query: fields.query ?? {}, params: fields.params ?? {}, protocol: 'http', get: (name: string) => fields.headers?.[name.toLowerCase()] ?? '' }) as unknown as Context;

const signer = new TokenSigner(Buffer.alloc(32), 'fingerprint');

const PARSERS: Array<[string, Parse]> = [
  ...SEARCH_TYPES.map((type): [string, Parse] => [`normalise(${type})`, (text) => normalise(type, text)]),
  ['parseDomain', parseDomain],
  ['parseEmail', parseEmail],
  ['parseIp', parseIp],
  ['readPhone', readPhone],
  ['looksLikeNationalPhone', looksLikeNationalPhone],
  ['parseRegion', parseRegion],
  ['detect', detect],
  ['detect (strong rules only)', (text) => detect(text, { strongOnly: true })],
  ['parseQuery', (text) => parseQuery(text, undefined)],
  ['X-Forwarded-For (hop count)', (text) => clientAddress({ mode: 'hops', hops: 32 }, '127.0.0.1', text)],
  ['X-Forwarded-For (trusted ranges)', (text) => clientAddress({ mode: 'ranges', ranges: [ipaddr.parseCIDR('0.0.0.0/0'), ipaddr.parseCIDR('::/0')] }, '127.0.0.1', text)],
  ['X-Forwarded-Host', (text) => requestOrigin(contextOf({ headers: { 'x-forwarded-host': text, host: text } }), true)],
  ['media selector', (text) => parseSelection(contextOf({ query: { img: text } }), { img: text })],
  ['media Range', (text) => parseRange(text, 1000)],
  ['media token', (text) => signer.check(text)],
  ['image Accept', readAccept],
  ['image extension', splitExtension],
];

// Every parameter reader of the three route tables: each reader of its own, and each kind of
// schema params.ts reads (a 0/1 switch, a bounded number, an enum, text).
const schemaKind = ({ schema }: Param) => (schema.enum ? (schema.type === 'integer' ? 'switch' : 'enum') : schema.type);
const readers = new Map<string, Param>();
for (const { method, path, params } of describedRoutes(ROUTE_TABLES)) {
  for (const p of params) {
    const key = p.read ? `${method} ${path} ${p.name}` : `of type ${schemaKind(p)}`;
    if (!readers.has(key) && !(p.read && [...readers.values()].some((seen) => seen.read === p.read))) readers.set(key, p);
  }
}
for (const [key, p] of readers) {
  const fields = (text: string) => (p.in === 'path' ? { params: { [p.name]: text } } : { query: { [p.name]: text } });
  PARSERS.push([`parameter ${key}`, (text) => readParams(contextOf(fields(text)), [p])]);
}

for (const [name, parse] of PARSERS) {
  test.serial(`${name} is linear on ${INPUTS.length} kinds of adversarial input`, async (t) => {
    t.is(await superLinear(parse), null);
  });
}
