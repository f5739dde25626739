import test from 'ava';
import { LruMap } from '../api/cache.ts';

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

test('LruMap counts bytes of what it holds', (t) => {
  const map = new LruMap<Buffer | string>(4);
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
