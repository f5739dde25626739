// Client addresses behind proxies: the client is the address just left of the last trusted hop,
// so rotating X-Forwarded-For never buys a new rate-limit identity, and forwarded Proto/Host
// count only from a trusted proxy.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { clientAddress, parseTrustProxy } from '../api/http/client-address.ts';
import { call, startApp, type RunningApp } from './helpers/service.ts';
import { startInOneWindow } from './helpers/rate-window.ts';

test('the client is left of the last trusted hop, for every TRUST_PROXY form', (t) => {
  const none = parseTrustProxy('false');
  t.is(clientAddress(none, '127.0.0.1', '198.51.100.1'), '127.0.0.1');
  const one = parseTrustProxy('1');
  t.is(clientAddress(one, '10.0.0.2', '198.51.100.1'), '198.51.100.1');
  t.is(clientAddress(one, '10.0.0.2', '6.6.6.6, 203.0.113.9'), '203.0.113.9', 'a left-most entry the client chose is never believed');
  t.is(clientAddress(parseTrustProxy('2'), '10.0.0.2', '6.6.6.6, 203.0.113.9, 10.0.0.1'), '203.0.113.9');
  t.is(clientAddress(one, '10.0.0.2', undefined), '10.0.0.2');
  const ranges = parseTrustProxy('10.0.0.0/8, 127.0.0.1, fd00::/8');
  t.is(clientAddress(ranges, '::ffff:127.0.0.1', '6.6.6.6, 198.51.100.4, 10.1.2.3'), '198.51.100.4');
  t.is(clientAddress(ranges, '198.51.100.50', '6.6.6.6'), '198.51.100.50', 'an untrusted peer speaks for itself');
  t.is(clientAddress(ranges, 'fd00::1', '2001:db8::7'), '2001:db8::7');
  t.is(clientAddress(ranges, '10.0.0.1', 'not-an-ip, 10.0.0.3'), '10.0.0.3', 'garbage stops the walk at the last trusted hop');
  t.is(clientAddress(parseTrustProxy('true'), '10.0.0.2', '6.6.6.6, 203.0.113.9'), '6.6.6.6', 'true trusts every hop (documented as unsafe)');
  t.is(clientAddress(one, '10.0.0.2', '[2001:db8::1]:443'), '2001:db8::1');
  t.is(clientAddress(one, '10.0.0.2', '192.0.2.1:8080'), '192.0.2.1');
  for (const bad of ['yes please', '10.0.0.0/99', '33', 'localhost']) t.throws(() => parseTrustProxy(bad), undefined, bad);
});

test('a bad TRUST_PROXY stops the start with code 78', async (t) => {
  const error = await t.throwsAsync(startApp({ SERVICES: 'search', TRUST_PROXY: '10.0.0.0/40' }));
  t.regex(error.message, /exited with 78/);
  t.regex(error.message, /TRUST_PROXY/);
});

let app: RunningApp;
test.before(async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'skinfarm-proxy-'));
  app = await startApp({ SERVICES: 'skins,media', TRUST_PROXY: '1', MEDIA_DIR: path.join(root, 'media'), DATA_DIR: path.join(root, 'data'), MEDIA_PASSWORD: 'open sesame' });
});
test.after.always(() => app?.stop());

const random = () => `${1 + Math.floor(Math.random() * 223)}.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}`;

test('with TRUST_PROXY=1, requests whose header starts with a new random address share one limit', async (t) => {
  const remaining: number[] = [];
  await startInOneWindow(5_000);
  for (let i = 0; i < 5; i += 1) {
    const r = await call(`${app.urls.skins}/v1/decode?value=e30=`, { headers: { 'x-forwarded-for': `${random()}, 203.0.113.9` } });
    remaining.push(Number(r.headers.get('x-ratelimit-remaining')));
  }
  t.deepEqual(remaining, remaining.map((_, i) => remaining[0] - i));
  t.true(app.logs.some((l) => l.msg === 'request' && l.ip === '203.0.113.9'));
});

test('rotating X-Forwarded-For does not lift the media password limit', async (t) => {
  const statuses: number[] = [];
  for (let i = 0; i < 14; i += 1) {
    const r = await call(`${app.urls.media}/?sim=vault`, { headers: { 'x-media-password': 'guess', 'x-forwarded-for': `${random()}, 198.51.100.77` } });
    statuses.push(r.status);
  }
  t.true(statuses.includes(403));
  t.is(statuses.at(-1), 429);
});

test('forwarded Proto and Host: only http or https, only a plain host', async (t) => {
  const hostile = await call(`${app.urls.media}/?img=scenery&format=json`, { headers: { 'x-forwarded-proto': 'javascript', 'x-forwarded-host': 'evil.example/"><x' } });
  t.is(hostile.status, 200);
  t.regex(hostile.json.url, /^http:\/\/127\.0\.0\.1:\d+\//);
  const honest = await call(`${app.urls.media}/?img=scenery&format=json`, { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'media.example.org' } });
  t.regex(honest.json.url, /^https:\/\/media\.example\.org\//);
});
