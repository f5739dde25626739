// NameBatcher: a lookup after a quiet window goes out at once; names that follow within the
// window share one bulk call. The source here stands for the upstream and records its calls.
import test from 'ava';
import { NameBatcher, type NameSource } from '../api/skins/name-batcher.ts';
import type { NameHit } from '../api/skins/types.ts';

function recordingSource() {
  const calls: string[][] = [];
  const hit = (name: string): NameHit => ({ id: `id-${name}`, name, source: 'official' });
  const source: NameSource = {
    nameToId: async (name) => {
      calls.push([name]);
      return hit(name);
    },
    namesToIds: async (names) => {
      calls.push(names);
      return names.map(hit);
    },
  };
  return { source, calls };
}

test('a lone lookup goes out at once, not after the window', async (t) => {
  const { source, calls } = recordingSource();
  // A window no test waits for: the first call must not be behind it.
  const batcher = new NameBatcher(source, 60_000, 10);
  const pending = batcher.lookup('Alex');
  t.deepEqual(calls, [['Alex']], 'sent before lookup() returned');
  t.like(await pending, { name: 'Alex' });
});

test('names that follow within the window share one bulk call; the window restarts after it', async (t) => {
  const { source, calls } = recordingSource();
  // Wide enough that a stalled machine does not split the names (each wait below is one window).
  const batcher = new NameBatcher(source, 500, 10);
  await batcher.lookup('first');
  const following = await Promise.all(['a', 'b', 'c'].map((n) => batcher.lookup(n)));
  t.deepEqual(following.map((h) => h?.name), ['a', 'b', 'c']);
  t.deepEqual(calls, [['first'], ['a', 'b', 'c']]);
  // Right after the bulk call went out, a name waits for company again.
  const next = batcher.lookup('d');
  t.is(calls.length, 2, 'held for the window');
  t.like(await next, { name: 'd' });
  t.deepEqual(calls.at(-1), ['d']);
});

test('a full chunk goes at once; names of a batch request always wait to be merged', async (t) => {
  const { source, calls } = recordingSource();
  const batcher = new NameBatcher(source, 60_000, 3);
  const bulk = ['x', 'y', 'z'].map((n) => batcher.lookup(n, true));
  t.deepEqual(calls, [['x', 'y', 'z']], 'three names fill the chunk');
  t.deepEqual((await Promise.all(bulk)).map((h) => h?.name), ['x', 'y', 'z']);
});
