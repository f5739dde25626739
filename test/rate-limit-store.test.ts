// The in-process rate-limit counters: one map per window, dropped whole once the window ends.
import test from 'ava';
import { MemoryCounterStore } from '../api/http/rate-limit.ts';

test('counts each client apart within a window, and afresh in the next one', async (t) => {
  const store = new MemoryCounterStore();
  const end = Date.now() + 60_000;
  t.deepEqual([await store.hit('images:a', end), await store.hit('images:a', end), await store.hit('images:b', end)], [1, 2, 1]);
  t.is(await store.hit('images:a', end + 60_000), 1);
  t.is(store.keys, 3, 'a window that has not ended yet is kept');
});

test('windows that have ended are dropped whole when a new one opens; others stay', async (t) => {
  const store = new MemoryCounterStore();
  const ended = Date.now() - 1;
  const open = Date.now() + 60_000;
  for (let i = 0; i < 1000; i += 1) await store.hit(`images:198.18.${i >> 8}.${i & 255}`, ended);
  await store.hit('upload:c', open);
  t.is(store.keys, 1, 'the ended window and its 1,000 clients are gone');
  t.is(await store.hit('upload:c', open), 2);
  await store.hit('images:d', open + 60_000);
  t.is(store.keys, 2, 'the window still open is kept beside the new one');
});

test('past the bound on clients a window holds, a new client counts as a first hit and is not kept', async (t) => {
  const store = new MemoryCounterStore(2);
  const end = Date.now() + 60_000;
  await store.hit('images:a', end);
  await store.hit('images:b', end);
  t.deepEqual([await store.hit('images:c', end), await store.hit('images:c', end)], [1, 1]);
  t.is(await store.hit('images:a', end), 2, 'clients already held keep counting');
  t.is(store.keys, 2);
});

test('a window is dropped after it ends even when no request follows', async (t) => {
  const store = new MemoryCounterStore();
  await store.hit('images:a', Date.now() + 100);
  t.is(store.keys, 1);
  // Polled, not timed: the drop is due a second after the window's end.
  const deadline = Date.now() + 10_000;
  while (store.keys > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(store.keys, 0);
});
