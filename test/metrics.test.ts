// /metrics as an attacker meets it: label values a client cannot grow, a token compared in
// constant time, and no metrics for another machine unless the operator says so.
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { ROUTE_TABLES } from '../api/route-tables.ts';
import { SHELL_ROUTES } from '../api/docs/shared-routes.ts';
import { metricsRefusal, OTHER_ROUTE, protectMetrics } from '../api/metrics.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';

const UNDOCUMENTED = { undocumented: 'random paths and refused metrics reads' };

/** Every value of one label in a Prometheus text exposition. */
function labelValues(text: string, label: string): Set<string> {
  const values = new Set<string>();
  for (const match of text.matchAll(new RegExp(`[{,]${label}="((?:[^"\\\\]|\\\\.)*)"`, 'g'))) values.add(match[1]);
  return values;
}

let app: RunningApp;
test.before(async () => {
  app = await startApp({ METRICS_TOKEN: '' });
});
test.after.always(() => app?.stop());

test('random paths add no label values: a request is labelled by its route, else "other"', async (t) => {
  const known = new Set([OTHER_ROUTE, ...SHELL_ROUTES.map((r) => r.path), ...ROUTE_TABLES.flatMap((table) => table.routes.map((r) => r.path))]);
  const metrics = () => call(`${app.urls.skins}/metrics`).then((r) => r.text);
  const before = await metrics();
  for (const [service, url] of Object.entries(app.urls)) {
    await Promise.all(Array.from({ length: 100 }, (_, i) =>
      call(`${url}/${i % 2 ? 'v1/' : ''}${randomBytes(6).toString('hex')}/${i}?x=${i}`, {}, UNDOCUMENTED).then((r) => t.is(r.status, 404, service))));
  }
  const after = await metrics();
  const routes = labelValues(after, 'route');
  t.true(routes.has(OTHER_ROUTE));
  t.deepEqual([...routes].filter((value) => !known.has(value)), []);
  // A few new series at most (each service's 404s as "other", 17 lines a series with the
  // histogram's): a label per path would add 300 series here, over 5,000 lines.
  const grown = after.split('\n').length - before.split('\n').length;
  t.true(grown < 300, `${grown} new lines`);
});

test('a matched route is labelled with its path template', async (t) => {
  t.is((await call(`${app.urls.skins}/v1/status`)).status, 200);
  const text = (await call(`${app.urls.skins}/metrics`)).text;
  t.regex(text, /skinfarm_http_requests_total\{service="skins",route="\/v1\/status",status="200"\} [1-9]/);
});

test('without a token, metrics are refused to a request that came through a proxy', async (t) => {
  for (const header of ['X-Forwarded-For', 'Forwarded']) {
    const r = await call(`${app.urls.search}/metrics`, { headers: { [header]: header === 'Forwarded' ? 'for=198.51.100.7' : '198.51.100.7' } }, UNDOCUMENTED);
    t.is(r.status, 403, header);
    t.false(r.text.includes('skinfarm_'));
  }
  t.is((await call(`${app.urls.search}/metrics`)).status, 200);
});

test('the access rule: token first, then this machine, then METRICS_PUBLIC', (t) => {
  try {
    protectMetrics({ token: null, public: false });
    t.is(metricsRefusal('', '127.0.0.1', false), null);
    t.is(metricsRefusal('', '::1', false), null);
    t.is(metricsRefusal('', '::ffff:127.0.0.1', false), null);
    t.is(metricsRefusal('', '203.0.113.9', false), 403);
    t.is(metricsRefusal('', '127.0.0.1', true), 403);
    t.is(metricsRefusal('', undefined, false), 403);
    protectMetrics({ token: null, public: true });
    t.is(metricsRefusal('', '203.0.113.9', true), null);
    protectMetrics({ token: 's3cret-token', public: true });
    t.is(metricsRefusal('', '127.0.0.1', false), 401);
    t.is(metricsRefusal('Bearer s3cret-toke', '127.0.0.1', false), 401);
    t.is(metricsRefusal('Bearer s3cret-token-and-more', '127.0.0.1', false), 401);
    t.is(metricsRefusal('Bearer s3cret-token', '203.0.113.9', true), null);
  } finally {
    protectMetrics({ token: null, public: false });
  }
});

test('with METRICS_TOKEN the bearer token is required, from any address', async (t) => {
  const secured = await startApp({ SERVICES: 'search', METRICS_TOKEN: 'metrics-token-0123' });
  t.teardown(() => secured.stop());
  const url = `${secured.urls.search}/metrics`;
  t.is((await call(url, {}, UNDOCUMENTED)).status, 401);
  t.is((await call(url, { headers: { Authorization: 'Bearer metrics-token-012' } }, UNDOCUMENTED)).status, 401);
  const ok = await call(url, { headers: { Authorization: 'Bearer metrics-token-0123', 'X-Forwarded-For': '198.51.100.7' } });
  t.is(ok.status, 200);
  t.regex(ok.text, /skinfarm_http_requests_total/);
});

test('METRICS_PUBLIC=true serves metrics to any address without a token', async (t) => {
  const open = await startApp({ SERVICES: 'search', METRICS_PUBLIC: 'true' });
  t.teardown(() => open.stop());
  t.is((await call(`${open.urls.search}/metrics`, { headers: { 'X-Forwarded-For': '198.51.100.7' } })).status, 200);
});
