// Every route is metered (issue #39): each route of the three route tables, and the shell's own
// answers (/ready, /metrics, a path no route serves, CORS preflights on any path), answers 429
// once its client has spent its group's quota, whatever the route costs; only what the contract exempts (/v1/status,
// /v1/sources) is counted in no group. A client is an X-Forwarded-For address (TRUST_PROXY=1),
// one per service and group, so each group's quota is spent once and then every route in it is
// asked. Real services, all three in one process.
import test from 'ava';
import { ROUTE_TABLES } from '../api/route-tables.ts';
import { routeLimit } from '../api/http/route-table.ts';
import { startFakeUpstream } from '../scripts/fake-upstream/server.ts';
import { startApp } from './helpers/service.ts';

const SAMPLE: Record<string, string> = { name: 'Knight', size: '64', file: 'viewer.js', id: 'k_unknown' };
const concrete = (template: string) => template.replace(/\{(\w+)\}/g, (_, name: string) => SAMPLE[name] ?? 'x');

test('every route answers 429 past its group\'s quota; /v1/status and /v1/sources are counted in none', async (t) => {
  const fake = await startFakeUpstream();
  const app = await startApp({
    ...fake.env, TRUST_PROXY: '1', SITE_RATE_LIMIT: '5', MEDIA_RATE_LIMIT: '5', MEDIA_FILE_RATE_LIMIT: '5', SEARCH_RATE_LIMIT: '5', SEARCH_ADMIN_RATE_LIMIT: '5',
    SEARCH_ADMIN_TOKEN: 'limitsAdmin-Q8vLm2XkR7tNp4WcZ9Hy', ACCESS_LOG: 'false', MAX_EVENT_LOOP_LAG_MS: '0',
  });
  t.teardown(async () => {
    await app.stop();
    await fake.close();
  });
  let clients = 0;
  const send = (service: keyof typeof app.urls, method: string, path: string, client: string) =>
    fetch(`${app.urls[service]}${path}`, {
      method: method.toUpperCase(), redirect: 'manual',
      headers: { 'x-forwarded-for': client, ...method === 'options' ? { origin: 'https://example.org', 'access-control-request-method': 'GET' } : {} },
    });
  // A limited preflight is the service's 429 envelope, with the CORS headers a preflight carries.
  const refusedPreflights: string[] = [];

  const unmetered: string[] = [];
  const notLimited: string[] = [];
  for (const table of ROUTE_TABLES) {
    // Each group of this service with its routes; the shell's answers are in `site`.
    const groups = new Map<string, Array<{ method: string; path: string }>>();
    for (const route of table.routes) {
      const limit = routeLimit(route);
      if (!limit) {
        unmetered.push(`${table.service} ${route.path}`);
        continue;
      }
      groups.set(limit.name, [...groups.get(limit.name) ?? [], { method: route.method, path: concrete(route.path) }]);
    }
    groups.get('site')?.push({ method: 'get', path: '/ready' }, { method: 'get', path: '/metrics' }, { method: 'get', path: '/no-such-route' }, { method: 'put', path: '/no-such-route' });
    // Preflights count in `site` whatever the path: a route of each group, the shell's, no route's.
    const preflightPaths = new Set([...[...groups.values()].map((routes) => routes[0].path), '/v1/status', '/metrics', '/no-such-route']);
    groups.get('site')?.push(...[...preflightPaths].map((path) => ({ method: 'options', path })));
    for (const [group, routes] of groups) {
      const client = `198.18.${Math.floor(++clients / 250)}.${clients % 250 + 1}`;
      // Spend the quota on the group's first route (the limiter counts before anything else runs).
      const [first] = routes;
      let spent = 0;
      for (let r = await send(table.service, first.method, first.path, client); r.status !== 429; r = await send(table.service, first.method, first.path, client)) {
        await r.arrayBuffer();
        if (++spent > 1000) break;
      }
      for (const { method, path } of routes) {
        const r = await send(table.service, method, path, client);
        const body = await r.text();
        if (r.status !== 429 || !r.headers.get('retry-after')) notLimited.push(`${table.service} ${group} ${method.toUpperCase()} ${path}: ${r.status}`);
        else if (method === 'options' && !(/"rate_limited"/.test(body) && r.headers.get('content-type')?.startsWith('application/json')
          && r.headers.get('access-control-allow-origin') === '*' && r.headers.get('access-control-allow-methods')?.includes('GET'))) {
          refusedPreflights.push(`${table.service} OPTIONS ${path}: ${r.headers.get('content-type')} ${body.slice(0, 200)}`);
        }
      }
    }
  }
  t.deepEqual(notLimited, [], 'answered past their group\'s quota');
  t.deepEqual(refusedPreflights, [], 'a limited preflight is the service\'s 429 error envelope with its CORS headers');
  t.deepEqual(unmetered.sort(), ['skins /v1/sources', 'skins /v1/status'], 'only what the contract exempts is unmetered');
  // And those two stay free for a client that has spent its site quota.
  const spender = '198.18.99.1';
  for (let i = 0; i < 6; i += 1) await (await send('skins', 'get', '/health', spender)).arrayBuffer();
  t.is((await send('skins', 'get', '/health', spender)).status, 429);
  t.is((await send('skins', 'get', '/v1/status', spender)).status, 200);
  t.is((await send('skins', 'get', '/v1/sources', spender)).status, 200);
});
