// The rate-limit counters: in process one map per group and window, dropped whole once the window
// ends; a bound per group on the clients a window holds; clients keyed by address, IPv6 by /64.
import test from 'ava';
import { clientKey, MemoryCounterStore, RateLimiter } from '../api/http/rate-limit.ts';
import { silentLogger } from '../shared/log.ts';



test('counts each client apart within a window, and afresh in the next one', async (t) => {
  const store = new MemoryCounterStore();
  const end = Date.now() + 60_000;
  t.deepEqual([await store.hit('images', 'a', end), await store.hit('images', 'a', end), await store.hit('images', 'b', end)], [1, 2, 1]);
  t.is(await store.hit('images', 'a', end + 60_000), 1);
  t.is(await store.hit('upload', 'a', end), 1, 'another group counts apart');
  t.is(store.keys, 4, 'a window that has not ended yet is kept');
});

test('windows that have ended are dropped whole when a new one opens; others stay', async (t) => {
  const store = new MemoryCounterStore();
  const ended = Date.now() - 1;
  const open = Date.now() + 60_000;
  for (let i = 0; i < 1000; i += 1) await store.hit('images', `198.18.${i >> 8}.${i & 255}`, ended);
  await store.hit('upload', 'c', open);
  t.is(store.keys, 1, 'the ended window and its 1,000 clients are gone');
  t.is(await store.hit('upload', 'c', open), 2);
  await store.hit('images', 'd', open + 60_000);
  t.is(store.keys, 2, 'the window still open is kept beside the new one');
});

test('past the bound on clients a group\'s window holds, a new client is not counted; other groups are not affected', async (t) => {
  const store = new MemoryCounterStore(2);
  const end = Date.now() + 60_000;
  await store.hit('images', 'a', end);
  await store.hit('images', 'b', end);
  t.deepEqual([await store.hit('images', 'c', end), await store.hit('images', 'c', end)], [null, null]);
  t.is(await store.hit('images', 'a', end), 2, 'clients already held keep counting');
  t.is(await store.hit('password', 'c', end), 1, 'a full group leaves the others their own room');
  t.is(store.keys, 3);
});

test('a full table lets a request group through and refuses an authentication group', async (t) => {
  const limiter = new RateLimiter(new MemoryCounterStore(3), silentLogger);
  const images = { name: 'images', limit: 5 };
  const password = { name: 'password', limit: 5, authentication: true };
  for (const ip of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
    await limiter.check(images, ip);
    await limiter.check(password, ip);
  }
  const image = await limiter.check(images, '198.51.100.4');
  t.false(image.limited);
  t.is(image.remaining, 4);
  t.true((await limiter.check(password, '198.51.100.4')).limited, 'a new guesser is refused while the table is full');
  t.false((await limiter.check(password, '198.51.100.1')).limited, 'clients already counted go on counting');
});

test('IPv6 clients are keyed by their /64, IPv4-mapped ones as IPv4, IPv4 as given', (t) => {
  t.is(clientKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  t.is(clientKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
  t.is(clientKey('2001:db8:1:3::1'), '2001:db8:1:3::/64');
  t.is(clientKey('::ffff:203.0.113.5'), '203.0.113.5');
  t.is(clientKey('203.0.113.5'), '203.0.113.5');
  t.is(clientKey('::1'), '0:0:0:0::/64');
  t.is(clientKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  t.is(clientKey('not an address:'), 'not an address:');
});

test('one /64 shares one count, however many of its addresses ask', async (t) => {
  const limiter = new RateLimiter(new MemoryCounterStore(), silentLogger);
  const group = { name: 'password', limit: 10, authentication: true };
  const outcomes = [];
  for (let i = 1; i <= 12; i += 1) outcomes.push(await limiter.check(group, `2001:db8:77:1:${i.toString(16)}::${i}`));
  t.deepEqual(outcomes.map((o) => o.limited), [...Array(10).fill(false), true, true]);
  t.false((await limiter.check(group, '2001:db8:77:2::1')).limited, 'the next /64 is another client');
});

test('a window is dropped after it ends even when no request follows', async (t) => {
  const store = new MemoryCounterStore();
  await store.hit('images', 'a', Date.now() + 100);
  t.is(store.keys, 1);
  // Polled, not timed: the drop is due a second after the window's end.
  const deadline = Date.now() + 10_000;
  while (store.keys > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(store.keys, 0);
});
