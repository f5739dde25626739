// Giving memory back after a load: a full collection on demand, the service's idle trim, and the
// API process relaunched on jemalloc (Linux, when installed) with its V8 young generation set,
// Chromium left on its own allocator.
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import v8 from 'node:v8';
import { currentAllocator, JEMALLOC_CONF, JEMALLOC_PATHS, jemallocEnvironment, withoutJemalloc } from '../shared/allocator.ts';
import { HEAP_GROWING_FLAG, SEARCH_OLD_SPACE_FLAG, SEMI_SPACE_FLAG, withSemiSpace, withV8Flags } from '../api/relaunch.ts';
import { collectGarbage } from '../shared/collect-garbage.ts';
import { startApp } from './helpers/service.ts';

const jemalloc = JEMALLOC_PATHS.find((file) => existsSync(file));
const linux = process.platform === 'linux';

test('collectGarbage() gives a heap the garbage grew back', (t) => {
  collectGarbage();
  const start = v8.getHeapStatistics().total_heap_size;
  let keep: unknown[] | null = Array.from({ length: 400 }, (_, i) => Array.from({ length: 50_000 }, (__, j) => ({ i, j })));
  const grown = v8.getHeapStatistics().total_heap_size;
  t.true(grown - start > 200 << 20, `the heap grew by ${grown - start} bytes`);
  t.is(keep.length, 400);
  keep = null;
  collectGarbage();
  const after = v8.getHeapStatistics().total_heap_size;
  t.true(after - start < 32 << 20, `${after - start} bytes above the start after collecting`);
});

test('jemallocEnvironment: preloads the first library found, keeps LD_PRELOAD and MALLOC_CONF given, and stays out of the way otherwise', (t) => {
  const found = (file: string) => file === JEMALLOC_PATHS[2];
  t.deepEqual(jemallocEnvironment({ PATH: '/bin' }, 'linux', found), { PATH: '/bin', LD_PRELOAD: JEMALLOC_PATHS[2], MALLOC_CONF: JEMALLOC_CONF });
  t.deepEqual(jemallocEnvironment({ LD_PRELOAD: '/opt/x.so', MALLOC_CONF: 'narenas:2' }, 'linux', found), { LD_PRELOAD: `${JEMALLOC_PATHS[2]}:/opt/x.so`, MALLOC_CONF: 'narenas:2' });
  t.is(jemallocEnvironment({ MEMORY_ALLOCATOR: ' System ' }, 'linux', found), null);
  t.is(jemallocEnvironment({ LD_PRELOAD: JEMALLOC_PATHS[2] }, 'linux', found), null, 'already on it: no second restart');
  t.is(jemallocEnvironment({}, 'darwin', found), null);
  t.is(jemallocEnvironment({}, 'linux', () => false), null);
});

test('withoutJemalloc: Chromium gets the environment without our preload, and anything else preloaded stays', (t) => {
  t.deepEqual(withoutJemalloc({ PATH: '/bin', LD_PRELOAD: JEMALLOC_PATHS[0], MALLOC_CONF: JEMALLOC_CONF }), { PATH: '/bin' });
  t.deepEqual(withoutJemalloc({ LD_PRELOAD: `${JEMALLOC_PATHS[0]}:/opt/x.so`, MALLOC_CONF: JEMALLOC_CONF }), { LD_PRELOAD: '/opt/x.so' });
  const plain = { PATH: '/bin', MALLOC_CONF: 'x' };
  t.is(withoutJemalloc(plain), plain);
  t.is(currentAllocator({ LD_PRELOAD: '/usr/lib/libjemalloc.so.2' }), 'jemalloc');
  t.is(currentAllocator({}), 'system');
});

const mapped = (pid: number) => readFileSync(`/proc/${pid}/maps`, 'utf8').includes('libjemalloc');
const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');

test('withSemiSpace: adds V8\'s semi-space size unless the command line or NODE_OPTIONS gives one', (t) => {
  t.deepEqual(withSemiSpace(['--enable-source-maps']), ['--enable-source-maps', SEMI_SPACE_FLAG]);
  const given = ['--max-semi-space-size=64'];
  t.is(withSemiSpace(given), given);
  const none: string[] = [];
  t.is(withSemiSpace(none, '--max_semi_space_size=8 --trace-warnings'), none);
  t.deepEqual(withSemiSpace(none, '--max-old-space-size=512'), [SEMI_SPACE_FLAG]);
});

test('withV8Flags: a search-only instance on PostgreSQL also gets its old generation capped, unless one is given', (t) => {
  const pg = { SERVICES: 'search', SEARCH_DATABASE_URL: 'postgres://127.0.0.1/search' };
  t.deepEqual(withV8Flags([], pg), [SEMI_SPACE_FLAG, SEARCH_OLD_SPACE_FLAG]);
  t.deepEqual(withV8Flags([], { ...pg, SERVICES: ' Search ' }), [SEMI_SPACE_FLAG, SEARCH_OLD_SPACE_FLAG]);
  // Holding the data in memory, or serving the skins too, it keeps V8's own limit.
  t.deepEqual(withV8Flags([], { ...pg, SEARCH_DATA: '/data' }), [SEMI_SPACE_FLAG]);
  t.deepEqual(withV8Flags([], { ...pg, SERVICES: 'skins,search' }), [SEMI_SPACE_FLAG, HEAP_GROWING_FLAG]);
  t.deepEqual(withV8Flags([], { SERVICES: 'search' }), [SEMI_SPACE_FLAG]);
  t.deepEqual(withV8Flags([], { ...pg, NODE_OPTIONS: '--max-old-space-size=512' }), [SEMI_SPACE_FLAG]);
  const given = ['--max_old_space_size=64', '--max-semi-space-size=8'];
  t.is(withV8Flags(given, pg), given);
});

test('withV8Flags: where the skins service runs, the old generation grows by half its live size between full collections, unless a growth is given', (t) => {
  t.deepEqual(withV8Flags([], {}), [SEMI_SPACE_FLAG, HEAP_GROWING_FLAG]);
  t.deepEqual(withV8Flags([], { SERVICES: 'media, Skins' }), [SEMI_SPACE_FLAG, HEAP_GROWING_FLAG]);
  t.deepEqual(withV8Flags([], { SERVICES: 'media,search' }), [SEMI_SPACE_FLAG]);
  t.deepEqual(withV8Flags([], { SERVICES: 'skins', NODE_OPTIONS: '--heap_growing_percent=20' }), [SEMI_SPACE_FLAG]);
  const given = ['--heap-growing-percent=100'];
  t.deepEqual(withV8Flags(given, { SERVICES: 'skins' }), [...given, SEMI_SPACE_FLAG]);
});

(linux && jemalloc ? test : test.skip)('the service runs on jemalloc in its own process (same pid), Chromium does not; MEMORY_ALLOCATOR=system keeps malloc', async (t) => {
  const app = await startApp({ SERVICES: 'skins', RENDER_WORKERS: '1', RENDER_GPU: 'off' }, { timeoutMs: 120_000 });
  t.teardown(() => app.stop());
  t.true(mapped(app.process.pid!), 'the pid the test started maps libjemalloc');
  t.true(commandLine(app.process.pid!).includes(SEMI_SPACE_FLAG), 'and runs with the young generation\'s size');
  t.true(commandLine(app.process.pid!).includes(HEAP_GROWING_FLAG), 'and the old generation\'s growth');
  t.is(app.logs.find((e) => e.msg === 'ready')?.allocator, 'jemalloc');
  const chromium = app.logs.filter((e) => e.msg === 'chromium started').map((e) => e.pid as number);
  t.is(chromium.length, 1);
  t.false(mapped(chromium[0]), 'Chromium keeps its own allocator');
  t.false(readFileSync(`/proc/${chromium[0]}/environ`, 'utf8').includes('LD_PRELOAD='));

  const plain = await startApp({ SERVICES: 'skins', MEMORY_ALLOCATOR: 'system' });
  t.teardown(() => plain.stop());
  t.false(mapped(plain.process.pid!));
  t.true(commandLine(plain.process.pid!).includes(SEMI_SPACE_FLAG), 'relaunched for the V8 setting alone');
  t.is(plain.logs.find((e) => e.msg === 'ready')?.allocator, 'system');
});

test('after IDLE_TRIM_SECONDS without a request the service trims once, and again after the next request', async (t) => {
  const app = await startApp({ SERVICES: 'skins', IDLE_TRIM_SECONDS: '1' });
  t.teardown(() => app.stop());
  const trims = () => app.logs.filter((e) => e.msg === 'idle: memory trimmed');
  const first = await app.waitForLog((e) => e.msg === 'idle: memory trimmed', 10_000);
  t.true(Array.isArray(first.rss_mb) && Array.isArray(first.heap_mb), JSON.stringify(first));
  const res = await fetch(`${app.urls.skins}/v1/sources`);
  t.is(res.status, 200);
  const count = trims().length;
  await app.waitForLog((e) => e.msg === 'idle: memory trimmed' && trims().indexOf(e) >= count, 10_000);
  t.is(trims().length, count + 1);
});

test('probes are not work: a service polled on /health, /ready, /metrics and /v1/status still trims', async (t) => {
  const app = await startApp({ SERVICES: 'skins', IDLE_TRIM_SECONDS: '1' });
  t.teardown(() => app.stop());
  const trimmed = () => app.logs.filter((e) => e.msg === 'idle: memory trimmed').length;
  await app.waitForLog((e) => e.msg === 'idle: memory trimmed', 10_000);
  await fetch(`${app.urls.skins}/v1/sources`);
  const before = trimmed();
  // Polled faster than the idle period, as an orchestrator and a scraper would.
  const poll = setInterval(() => {
    for (const probe of ['/health', '/ready', '/metrics', '/v1/status?pretty=1']) void fetch(`${app.urls.skins}${probe}`).then((r) => r.arrayBuffer(), () => {});
  }, 100);
  t.teardown(() => clearInterval(poll));
  await app.waitForLog((e) => e.msg === 'idle: memory trimmed' && trimmed() > before, 10_000);
  t.true(trimmed() > before);
});
