// docker-compose.yml: parsed and checked for what the deployment relies on; validated by
// `docker compose config` where a Compose client is installed (none is on these machines).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import { MAX_SKIN_BYTES } from '../shared/skin-layout.ts';
import { ROOT } from './helpers/service.ts';

interface Service { profiles?: string[]; environment?: Record<string, string>; deploy?: { resources?: { reservations?: { devices?: Array<{ driver: string; capabilities: string[] }> } } }; healthcheck?: unknown; build?: unknown; image?: string; networks?: { default?: { aliases?: string[] } } }
const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const services = compose.services;

test('redis with persistence, two skins instances behind a load balancer, media and search', (t) => {
  t.truthy(services.redis);
  t.true(JSON.stringify(services.redis).includes('appendonly'));
  const cpu = Object.entries(services).filter(([, s]) => s.profiles?.includes('cpu'));
  t.is(cpu.length, 2);
  for (const [, s] of cpu) {
    t.is(s.environment?.SERVICES, 'skins');
    t.is(s.environment?.REDIS_URL, 'redis://redis:6379');
    t.true(s.networks?.default?.aliases?.includes('skins') ?? false, 'reachable as "skins" for the balancer');
  }
  t.true(readFileSync(path.join(ROOT, 'deploy/nginx.conf'), 'utf8').includes('server skins:3000'));
  t.is(services.media.environment?.SERVICES, 'media');
  t.is(services.search.environment?.SERVICES, 'search');
  for (const name of ['redis', 'lb']) t.truthy(services[name].healthcheck, `${name} has a health check`);
  t.true(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').includes('HEALTHCHECK'));
});

test('state in a Redis that never evicts, the cache in a bounded one that evicts the least recently used', (t) => {
  const command = (name: string) => (services[name] as { command?: string[] }).command ?? [];
  const option = (name: string, key: string) => command(name)[command(name).indexOf(key) + 1];
  t.is(option('redis', '--maxmemory-policy'), 'noeviction');
  t.is(option('redis-cache', '--maxmemory-policy'), 'allkeys-lru');
  t.regex(option('redis-cache', '--maxmemory'), /mb\}?$/);
  t.truthy(services['redis-cache'].healthcheck);
  for (const [name, s] of Object.entries(services)) {
    if (!s.environment?.REDIS_URL) continue;
    t.is(s.environment.CACHE_REDIS_URL, 'redis://redis-cache:6379', `${name} keeps its cache apart`);
    t.true('METRICS_TOKEN' in s.environment, `${name} passes METRICS_TOKEN on`);
  }
});

test('the gpu profile gives the render containers an NVIDIA device and RENDER_GPU=on', (t) => {
  const gpu = Object.entries(services).filter(([, s]) => s.profiles?.includes('gpu'));
  t.is(gpu.length, 2);
  for (const [, s] of gpu) {
    t.is(s.environment?.RENDER_GPU, 'on');
    const device = s.deploy?.resources?.reservations?.devices?.[0];
    t.is(device?.driver, 'nvidia');
    t.true(device?.capabilities.includes('gpu') ?? false);
  }
});

test('only the load balancer\'s hop is trusted, and no service that trusts a proxy is published', (t) => {
  for (const [name, s] of Object.entries(services)) {
    const trust = s.environment?.TRUST_PROXY;
    if (trust === undefined) continue;
    t.not(trust, 'true', `${name} must not trust every hop`);
    t.is((s as { ports?: unknown[] }).ports, undefined, `${name} trusts a proxy, so only the proxy may reach it`);
  }
  t.is(services.media.environment?.TRUST_PROXY, undefined, 'media is published directly');
});

test('nginx passes a full upload form, caps connections per client and never retries the service\'s own 5xx', (t) => {
  const conf = readFileSync(path.join(ROOT, 'deploy/nginx.conf'), 'utf8').replace(/#.*$/gm, '');
  const directive = (name: string) => new RegExp(`^\\s*${name}\\s+([^;]+);`, 'm').exec(conf)?.[1].trim();
  // A skin and a cape of MAX_SKIN_BYTES each, and the form around them.
  const [, amount, unit] = /^(\d+)([kKmM]?)$/.exec(directive('client_max_body_size') ?? '') ?? [];
  const bytes = Number(amount) * ({ k: 1024, m: 1024 ** 2 }[unit?.toLowerCase() as 'k' | 'm'] ?? 1);
  t.true(bytes > 2 * MAX_SKIN_BYTES, `client_max_body_size ${directive('client_max_body_size')}`);
  const zone = /limit_conn_zone\s+\$binary_remote_addr\s+zone=(\w+):/.exec(conf)?.[1];
  t.truthy(zone, 'a limit_conn_zone keyed by the client address');
  t.regex(directive('limit_conn') ?? '', new RegExp(`^${zone}\\s+\\d+$`));
  const retried = (directive('proxy_next_upstream') ?? '').split(/\s+/);
  t.deepEqual(retried.filter((c) => /^http_5/.test(c) || c === 'non_idempotent'), [], 'a 502/503/504 is the service\'s answer, passed on');
});

// No Compose client on these machines: the test is skipped by name, with the reason, not passed.
const composeClient = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' }).status === 0;
(composeClient ? test : test.skip)('docker compose config accepts the file (needs a Docker Compose client)', (t) => {
  for (const profile of ['cpu', 'gpu']) {
    const run = spawnSync('docker', ['compose', '--profile', profile, 'config', '--quiet'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, SESSION_SECRET: 'x'.repeat(32) } });
    t.is(run.status, 0, run.stderr);
  }
});
