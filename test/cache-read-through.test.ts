// The one read-through order every cached answer follows: fresh, error memo, stale on error,
// negative TTL, coalescing; on the real in-memory cache.
import test from 'ava';
import { Cache } from '../api/cache.ts';
import { DEFAULT_TTLS } from '../api/config.ts';
import { ReadThrough, type ReadThroughOptions } from '../api/read-through.ts';
import { createLogger, silentLogger } from '../shared/log.ts';

/** A namespace fresh for `ttl` seconds and kept 60 s stale beyond, behind a read-through. */
function reader<T>(ttl: number, options: ReadThroughOptions = {}) {
  const cache = new Cache({ maxEntries: 100, staleSeconds: 60, ttl: DEFAULT_TTLS, log: silentLogger });
  return new ReadThrough<T>(cache.namespace<T>('test', ttl), options);
}

/** A fetch that counts its calls and answers (or throws) what it is told. */
function upstream<T>(answer: () => T) {
  const counter = { calls: 0, fetch: async () => { counter.calls += 1; await Promise.resolve(); return answer(); } };
  return counter;
}

test('concurrent reads of one key share one call; the next read is a fresh hit', async (t) => {
  const read = reader<string>(60);
  const up = upstream(() => 'v1');
  const answers = await Promise.all([read.get('k', up.fetch), read.get('k', up.fetch), read.get('k', up.fetch)]);
  t.deepEqual(answers.map((a) => a.cache), ['MISS', 'MISS', 'MISS']);
  t.is(up.calls, 1);
  t.deepEqual(await read.get('k', up.fetch), { value: 'v1', cache: 'HIT' });
  t.is(up.calls, 1);
});

test('a null answer is fresh only for the negative TTL', async (t) => {
  const read = reader<string | null>(60, { negativeTtlSeconds: 0 });
  const up = upstream(() => null);
  t.is((await read.get('nobody', up.fetch)).value, null);
  await read.get('nobody', up.fetch);
  t.is(up.calls, 2, 'the negative answer was not kept fresh for the namespace TTL');
  const known = upstream(() => 'someone');
  await read.get('somebody', known.fetch);
  await read.get('somebody', known.fetch);
  t.is(known.calls, 1);
});

test('a failed refresh answers the stale entry, and the failure is remembered for errorTtlMs', async (t) => {
  const read = reader<string>(0, { errorTtlMs: 60_000 });
  let fail = false;
  const up = upstream(() => { if (fail) throw new Error('down'); return 'good'; });
  t.deepEqual(await read.get('k', up.fetch), { value: 'good', cache: 'MISS' });
  fail = true;
  t.deepEqual(await read.get('k', up.fetch), { value: 'good', cache: 'STALE' });
  t.is(up.calls, 2);
  t.deepEqual(await read.get('k', up.fetch), { value: 'good', cache: 'STALE' });
  t.is(up.calls, 2, 'the remembered failure answered without a call');
  await t.throwsAsync(read.get('other', up.fetch), { message: 'down' });
  await t.throwsAsync(read.get('other', up.fetch), { message: 'down' });
  t.is(up.calls, 3, 'a key with no entry rethrows the remembered failure');
});

test('a stale "not found" is not served when the refresh fails', async (t) => {
  const read = reader<string | null>(0, { negativeTtlSeconds: 0 });
  let fail = false;
  const up = upstream(() => { if (fail) throw new Error('down'); return null; });
  await read.get('nobody', up.fetch);
  fail = true;
  await t.throwsAsync(read.get('nobody', up.fetch), { message: 'down' });
});

test('force refetches a fresh entry and falls back to it when the refetch fails', async (t) => {
  const read = reader<string>(60);
  let answer: () => string = () => 'old';
  const up = upstream(() => answer());
  await read.get('k', up.fetch);
  answer = () => 'new';
  t.deepEqual(await read.get('k', up.fetch, { force: true }), { value: 'new', cache: 'MISS' });
  answer = () => { throw new Error('down'); };
  t.deepEqual(await read.get('k', up.fetch, { force: true }), { value: 'new', cache: 'STALE' });
  t.is(up.calls, 3);
});

test('the error memo holds the latest 10,000 failures: the oldest calls again, a recent one does not', async (t) => {
  const read = reader<string>(60, { errorTtlMs: 60_000 });
  const down = upstream<string>(() => { throw new Error('down'); });
  for (let i = 0; i <= 10_000; i += 1) await t.throwsAsync(read.get(`k${i}`, down.fetch));
  t.is(down.calls, 10_001);
  await t.throwsAsync(read.get('k10000', down.fetch));
  t.is(down.calls, 10_001, 'the latest failure is remembered');
  await t.throwsAsync(read.get('k0', down.fetch));
  t.is(down.calls, 10_002, 'the oldest was forgotten past the bound, so it was called again');
  await t.throwsAsync(read.get('k0', down.fetch));
  t.is(down.calls, 10_002, 'and is remembered anew');
});

test('admit is asked only by a request that starts a call: not for a hit, not for joining one in flight', async (t) => {
  const read = reader<string>(60);
  const admitted: string[] = [];
  const admit = (who: string) => async () => { admitted.push(who); };
  let started!: () => void;
  const fetchStarted = new Promise<void>((resolve) => { started = resolve; });
  let finish!: (value: string) => void;
  const first = read.get('k', () => { started(); return new Promise<string>((resolve) => { finish = resolve; }); }, { admit: admit('first') });
  await fetchStarted;
  const joiner = read.get('k', async () => 'never', { admit: admit('joiner') });
  finish('v');
  t.deepEqual((await Promise.all([first, joiner])).map((a) => a.value), ['v', 'v']);
  t.deepEqual(await read.get('k', async () => 'never', { admit: admit('hit') }), { value: 'v', cache: 'HIT' });
  t.deepEqual(admitted, ['first']);
});

test('a refusal from admit stops the call and is not remembered for other clients', async (t) => {
  const read = reader<string>(60, { errorTtlMs: 60_000 });
  const up = upstream(() => 'v');
  await t.throwsAsync(read.get('k', up.fetch, { admit: async () => { throw new Error('over budget'); } }), { message: 'over budget' });
  t.is(up.calls, 0);
  t.deepEqual(await read.get('k', up.fetch, { admit: async () => {} }), { value: 'v', cache: 'MISS' });
});

test('with staleWaitMs a slow call answers the stale entry, then stores its answer in the background', async (t) => {
  const read = reader<string>(0, { staleWaitMs: 0 });
  let answer = 'old';
  let release!: () => void;
  let gate: Promise<void> = Promise.resolve();
  const up = upstream(() => answer);
  const slow = async () => { await gate; return up.fetch(); };
  t.deepEqual(await read.get('k', slow), { value: 'old', cache: 'MISS' }, 'nothing stale yet: the call is waited for');
  gate = new Promise<void>((resolve) => { release = resolve; });
  answer = 'new';
  t.deepEqual(await read.get('k', slow), { value: 'old', cache: 'STALE' }, 'the call has not answered: the stale entry does');
  t.deepEqual(await read.get('k', slow), { value: 'old', cache: 'STALE' }, 'a request joining the call does not wait either');
  const running = read.current('k');
  release();
  t.deepEqual(await running, { value: 'new', cache: 'MISS' });
  t.is(up.calls, 2, 'one call for both stale requests');
  t.is((await read.ns.get('k'))?.value, 'new', 'the background call stored its answer');
  // A stale "not found" is never served (see above), so it waits for the call.
  const nobody = reader<string | null>(0, { staleWaitMs: 0, negativeTtlSeconds: 0 });
  await nobody.get('k', async () => null);
  const later = async () => { await new Promise((resolve) => setImmediate(resolve)); return 'exists now'; };
  t.deepEqual(await nobody.get('k', later), { value: 'exists now', cache: 'MISS' });
});

test('serving stale is logged once as a state, not once per answer', async (t) => {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger('warn', {}, (line) => lines.push(JSON.parse(line)));
  const read = reader<string>(0, { log });
  let fail = false;
  const up = upstream(() => { if (fail) throw Object.assign(new Error('down'), { code: 'upstream_error' }); return 'good'; });
  await read.get('k', up.fetch);
  fail = true;
  for (let i = 0; i < 1000; i += 1) t.is((await read.get('k', up.fetch)).cache, 'STALE');
  t.is(up.calls, 1001);
  t.is(lines.length, 1, `${lines.length} lines`);
  t.like(lines[0], { level: 'warn', namespace: 'test', key: 'k', code: 'upstream_error' });
});
