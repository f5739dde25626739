import test from 'ava';
import { Cache } from '../api/cache.ts';
import { LruMap } from '../shared/lru-map.ts';
import { ConfigError, DEFAULT_TTLS, loadConfig } from '../api/config.ts';
import { silentLogger } from '../shared/log.ts';

test('LruMap keeps its bound and evicts the least recently used entry', (t) => {
  const map = new LruMap<string>(8);
  for (const key of 'abcdefgh') map.set(key, key.repeat(10));
  t.is(map.get('a'), 'aaaaaaaaaa'); // old enough to move to the newest end
  map.set('i', 'i');
  t.is(map.size, 8);
  t.true(map.has('a'));
  t.false(map.has('b'));
  for (const key of 'jklmno') map.set(key, key);
  t.true(map.has('a'), 'a was read more recently than c-h');
  t.deepEqual([...map.keys()].sort(), ['a', 'i', 'j', 'k', 'l', 'm', 'n', 'o']);
});

test('LruMap counts bytes of what it holds when bounded in bytes', (t) => {
  const map = new LruMap<Buffer | string>(4, 1 << 20);
  map.set('k1', Buffer.alloc(100));
  map.set('k2', 'x'.repeat(50));
  t.is(map.bytes, 100 + 2 + 50 + 2);
  map.set('k1', Buffer.alloc(10));
  t.is(map.bytes, 10 + 2 + 50 + 2);
  map.delete('k2');
  t.is(map.bytes, 12);
  for (const key of ['a', 'b', 'c', 'd']) map.set(key, 'v');
  t.is(map.size, 4);
  t.is(map.bytes, 4 * 2);
  map.clear();
  t.is(map.bytes, 0);
});

test('LruMap bounded only in entries holds any value, a cyclic one too, without sizing it', (t) => {
  const map = new LruMap<object>(2);
  const cyclic: { self?: object } = {};
  cyclic.self = cyclic;
  map.set('a', cyclic);
  t.is(map.get('a'), cyclic);
  t.is(map.bytes, 0);
});

test('LruMap entries whose size is known later (decoded-texture promises) count once resized, and the bound holds', async (t) => {
  const map = new LruMap<Promise<{ data: Buffer }>>(512, 64 * 1024);
  for (let i = 0; i < 20; i += 1) {
    const key = `hash${i}`;
    const pending = Promise.resolve({ data: Buffer.alloc(16 * 1024) });
    map.set(key, pending);
    map.resize(key, (await pending).data.length);
    t.true(map.bytes <= 64 * 1024, `after ${i + 1}: ${map.bytes} bytes`);
  }
  t.is(map.size, 3, 'three 16 KiB textures and their keys fit in 64 KiB');
  t.true(map.has('hash19') && map.has('hash17') && !map.has('hash16'));
  map.resize('gone', 1_000_000);
  t.is(map.size, 3, 'resizing a key that is not held changes nothing');
});

test('LruMap keeps its byte bound: the oldest go first, an entry larger than the bound is not kept', (t) => {
  const map = new LruMap<Buffer>(1000, 1000);
  for (let i = 0; i < 50; i += 1) {
    // 100 bytes each: a three-character key and 97 bytes.
    map.set(`k${String(i).padStart(2, '0')}`, Buffer.alloc(97));
    t.true(map.bytes <= 1000, `after ${i + 1} entries: ${map.bytes} bytes`);
  }
  t.is(map.size, 10);
  t.deepEqual([...map.keys()], Array.from({ length: 10 }, (_, i) => `k${40 + i}`));
  map.set('huge', Buffer.alloc(2000));
  t.false(map.has('huge'));
  t.is(map.bytes, 0);
});

test('LruMap under its byte bound still keeps a key that is read while new ones arrive', (t) => {
  // The entry bound is far away: only the byte bound evicts, and the hot key must not be its victim.
  const map = new LruMap<Buffer>(100_000, 100 * 100);
  map.set('hot', Buffer.alloc(97));
  for (let i = 0; i < 1000; i += 1) {
    map.set(`cold${i}`, Buffer.alloc(96));
    t.truthy(map.get('hot'), `after ${i + 1} cold entries`);
  }
  t.true(map.bytes <= 100 * 100);
});

/** The LRU rules written plainly (an array, oldest first), to check LruMap against. */
class ReferenceLru {
  order: string[] = [];
  private readonly ticks = new Map<string, number>();
  private readonly sizes = new Map<string, number>();
  private sets = 0;
  bytes = 0;
  private readonly limit: number;
  private readonly maxBytes: number;
  constructor(limit: number, maxBytes: number) {
    this.limit = limit;
    this.maxBytes = maxBytes;
  }
  set(key: string, value: string): void {
    this.delete(key);
    this.order.push(key);
    this.ticks.set(key, ++this.sets);
    this.sizes.set(key, value.length + key.length);
    this.bytes += value.length + key.length;
    while (this.order.length > this.limit || this.bytes > this.maxBytes) this.delete(this.order[0]);
  }
  get(key: string): void {
    const tick = this.ticks.get(key);
    if (tick === undefined || this.sets - tick <= this.order.length >> 2) return;
    this.order.splice(this.order.indexOf(key), 1);
    this.order.push(key);
    this.ticks.set(key, this.sets);
  }
  delete(key: string): void {
    const at = this.order.indexOf(key);
    if (at < 0) return;
    this.order.splice(at, 1);
    this.bytes -= this.sizes.get(key)!;
    this.ticks.delete(key);
    this.sizes.delete(key);
  }
  clear(): void {
    for (const key of [...this.order]) this.delete(key);
  }
}

test('LruMap evicts exactly what the plain LRU rules say, through many evictions, reads, deletes and clears', (t) => {
  // Evictions walk one kept iterator across V8's table rebuilds: checked against the rules step by step.
  const map = new LruMap<string>(64, 3000);
  const model = new ReferenceLru(64, 3000);
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let step = 0; step < 30_000; step += 1) {
    const key = `k${random(400)}`;
    const op = random(100);
    if (op < 60) {
      const value = 'v'.repeat(random(80));
      map.set(key, value);
      model.set(key, value);
    } else if (op < 90) {
      map.get(key);
      model.get(key);
    } else if (op < 99) {
      map.delete(key);
      model.delete(key);
    } else if (random(20) === 0) {
      map.clear();
      model.clear();
    }
    if (step % 100 === 0 || op >= 99) {
      t.deepEqual([...map.keys()], model.order, `step ${step}`);
      t.is(map.bytes, model.bytes, `step ${step}`);
    }
  }
  t.deepEqual([...map.keys()], model.order);
});

test('the cache holds no more bytes than CACHE_MAX_BYTES, whatever is stored', async (t) => {
  const cache = new Cache({ maxEntries: 100_000, maxBytes: 64 * 1024, staleSeconds: 60, ttl: DEFAULT_TTLS, log: silentLogger });
  const renders = cache.namespace<Buffer>('render', 300);
  const profiles = cache.namespace<{ id: string; name: string }>('profile');
  for (let i = 0; i < 2000; i += 1) {
    await renders.set(`avatar:${i}`, Buffer.alloc(400 + (i % 7) * 300, i));
    await profiles.set(`official:${i}`, { id: i.toString(16).padStart(32, '0'), name: `player_${i}` });
    t.true((await cache.stats()).bytes! <= 64 * 1024);
  }
  const stats = await cache.stats();
  t.true(stats.entries < 2000 && stats.entries > 50, `${stats.entries} entries`);
  t.deepEqual((await renders.get('avatar:1999'))?.value, Buffer.alloc(400 + (1999 % 7) * 300, 1999));
  t.is(await renders.get('avatar:0'), undefined);
});

test('CACHE_MAX_BYTES is validated at start-up like the other settings', (t) => {
  t.is(loadConfig({}).cache.maxBytes, 128 * 1024 * 1024);
  t.is(loadConfig({ CACHE_MAX_BYTES: '33554432' }).cache.maxBytes, 32 * 1024 * 1024);
  for (const raw of ['lots', '1e9', '1000', '-1']) {
    const error = t.throws(() => loadConfig({ CACHE_MAX_BYTES: raw }), { instanceOf: ConfigError });
    t.regex(error.message, /CACHE_MAX_BYTES must be an integer from 1048576/, raw);
  }
});
