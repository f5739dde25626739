// docs/configuration.md is written from the configuration's own reads (npm run config-docs): the
// page is what the generator writes, every variable the code reads or names is on it, and each
// rule it shows is the one the reader applies.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { ConfigError, describeConfig, loadConfig } from '../api/config.ts';
import { configurationPage, PAGE } from '../scripts/config-docs.ts';
import { limitGroupsTable, SECURITY_PAGE, withLimitGroups } from '../scripts/limit-groups-doc.ts';
import { ROOT } from './helpers/service.ts';

const DESCRIBED = describeConfig().flatMap((section) => section.variables);
const NAMES = new Set(DESCRIBED.map((variable) => variable.name));

/** Node's own variables, which api/ looks at but does not define. */
const NODE_VARIABLES = new Set(['NODE_OPTIONS']);

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const name = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sources(name);
    return entry.name.endsWith('.ts') ? [name] : [];
  });
}

test('docs/configuration.md is what `npm run config-docs` writes', (t) => {
  t.is(readFileSync(PAGE, 'utf8'), configurationPage(), 'docs/configuration.md is stale: run npm run config-docs');
});

test('docs/security.md lists every rate-limit group with its routes as `npm run config-docs` writes it from the route tables', (t) => {
  const page = readFileSync(SECURITY_PAGE, 'utf8');
  t.is(page, withLimitGroups(page), 'docs/security.md\'s limit groups are stale: run npm run config-docs');
  const table = limitGroupsTable();
  for (const line of ['| `site` | 600 |', '| `normal` | 120 |', '| `image` | 240 |', '| `batch` | 300 |']) t.true(table.includes(line), line);
  t.regex(table, /none \(the contract exempts them\) \| \| skins `GET \/v1\/status`, skins `GET \/v1\/sources` \|/);
});

test('every variable the configuration reads is described once, the conditional and the computed ones too', (t) => {
  const read = new Set<string>();
  loadConfig(new Proxy({}, { get: (_, name) => (typeof name === 'string' && read.add(name), undefined) }));
  t.deepEqual([...read].filter((name) => !NAMES.has(name)), []);
  t.is(NAMES.size, DESCRIBED.length, 'no variable described twice');
  for (const name of ['SEARCH_SOURCE_TIMEOUT_MS', 'SEARCH_PUBLIC_URL', 'CACHE_REDIS_URL', 'EXTERNAL_PROFILES_BUDGET', 'CACHE_TTL_NEGATIVE', 'MEDIA_PASSWORD_HASH']) t.true(NAMES.has(name), name);
  t.true(DESCRIBED.every((variable) => variable.default && variable.meaning), 'each has a default and a meaning');
});

test('every variable named in api/ is described', (t) => {
  const patterns = [
    /\benv\??\.([A-Z][A-Z0-9_]*)\b/g,
    /\benv\[['"`]([A-Z][A-Z0-9_]*)['"`]\]/g,
    /\.(?:read|optional|given)\(\s*['"`]([A-Z][A-Z0-9_]*)['"`]/g,
  ];
  const named = new Map<string, string>();
  for (const file of sources('api')) {
    const source = readFileSync(path.join(ROOT, file), 'utf8');
    for (const pattern of patterns) for (const [, name] of source.matchAll(pattern)) named.set(name, file);
  }
  t.true(named.size > 60, 'the names were found');
  t.deepEqual([...named].filter(([name]) => !NAMES.has(name) && !NODE_VARIABLES.has(name)).map(([name, file]) => `${name} (${file})`), []);
});

test('each rule the page shows is the one applied: breaking it stops the start with a problem naming the variable and the rule', (t) => {
  const ruled = DESCRIBED.filter((variable) => variable.rule);
  t.true(ruled.length > 60);
  for (const { name, rule } of ruled) {
    const error = t.throws(() => loadConfig({ [name]: 'not-a-value!' }), { instanceOf: ConfigError }, name);
    t.true(error?.problems.some((problem) => problem.startsWith(`${name} must ${rule}`)), `${name}: ${error?.problems.join('; ')}`);
  }
});
