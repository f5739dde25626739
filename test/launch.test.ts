// scripts/launch.ts starts the service for the tests, the benchmarks and the demo alike, so nothing
// outside test/ reaches into it: the product and its tools stand without the test helpers.
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { freePort, launch, ON_FREE_PORTS } from '../scripts/launch.ts';
import { ROOT } from './helpers/service.ts';

/** `from '…'`, `import '…'` and `import('…')`: every module specifier of a file. */
const SPECIFIER = /\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g;

/** Source files under `dir`; names starting with a dot are left out, as tsc's include does. */
function* sources(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(file);
    else if (/\.(ts|mts|js|mjs|cjs)$/.test(entry.name)) yield file;
  }
}

test('nothing under api/, renderer/, shared/ or scripts/ imports from test/', (t) => {
  const tests = path.join(ROOT, 'test');
  const offenders: string[] = [];
  for (const top of ['api', 'renderer', 'shared', 'scripts']) {
    for (const file of sources(path.join(ROOT, top))) {
      for (const [, specifier] of fs.readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
        const target = path.resolve(path.dirname(file), specifier);
        if (specifier.startsWith('.') && (target === tests || target.startsWith(`${tests}${path.sep}`))) offenders.push(`${path.relative(ROOT, file)}: ${specifier}`);
      }
    }
  }
  t.deepEqual(offenders, []);
});

test('at LOG_LEVEL=warn, which hides the ready line, a launch is ready once /health answers 200', async (t) => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const service = await launch({ ...ON_FREE_PORTS, SERVICES: 'search', SEARCH_PORT: String(port), LOG_LEVEL: 'warn' }, { health: url });
  t.teardown(() => service.stop());
  t.false(service.logs.some((entry) => entry.msg === 'ready'));
  t.is((await fetch(`${url}/health`)).status, 200);
  t.is(await service.stop(), 0);
});

test('with dropLogs, lines after the start are passed on and not kept', async (t) => {
  const seen: string[] = [];
  const service = await launch({ ...ON_FREE_PORTS, SERVICES: 'search', LOG_LEVEL: 'info' }, { dropLogs: true, onLine: (line) => seen.push(line) });
  t.teardown(() => service.stop());
  const [kept, logged] = [service.rawLog.length, seen.length];
  t.true(service.logs.some((entry) => entry.msg === 'ready'));
  for (let i = 0; i < 3; i += 1) t.is((await fetch(`${service.urls.search}/health`)).status, 200);
  t.is(await service.stop(), 0);
  t.true(seen.length >= logged + 3, seen.slice(logged).join('\n'));
  t.is(service.rawLog.length, kept);
});
