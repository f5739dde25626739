// Password guessing against private media, as a patient attacker with many addresses would try:
// an IPv6 /64 counts as one client, wrong passwords from everyone share an hourly budget that,
// once spent, stops the networks that guessed but not the owner's new browser, and only two
// password checks run at once.
import test from 'ava';
import { PrivateAccess } from '../api/media/access.ts';
import { hashedPasswordVerifier, hashPassword } from '../api/media/password.ts';
import { TokenSigner } from '../api/media/token.ts';
import { MemoryCounterStore, RateLimiter } from '../api/http/rate-limit.ts';
import { ApiError } from '../shared/errors.ts';
import { silentLogger } from '../shared/log.ts';
import { call, type RunningApp } from './helpers/service.ts';
import { buildTestLibrary, removeTempDirs, startMedia, tempDir } from './helpers/media-library.ts';

const PASSWORD = 'open sesame';
let root: string;
const apps: RunningApp[] = [];

test.before(async () => {
  ({ root } = await buildTestLibrary());
});
test.after.always(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  await removeTempDirs();
});

async function start(env: Record<string, string>): Promise<RunningApp> {
  const app = await startMedia({ MEDIA_DIR: root, DATA_DIR: await tempDir('media-data'), MEDIA_PASSWORD: PASSWORD, TRUST_PROXY: 'true', ...env });
  apps.push(app);
  return app;
}

const guess = (app: RunningApp, from: string, password: string) =>
  call(`${app.urls.media}/?sim=secret`, { headers: { 'X-Forwarded-For': from, 'X-Media-Password': password } });

test('twelve addresses of one IPv6 /64 share one budget of ten checks', async (t) => {
  const app = await start({});
  const statuses = [];
  for (let i = 1; i <= 12; i += 1) statuses.push((await guess(app, `2001:db8:5:6:${i.toString(16)}::${i}`, `wrong-${i}`)).status);
  t.deepEqual(statuses, [...Array(10).fill(403), 429, 429]);
  t.is((await guess(app, '2001:db8:5:6:ffff::1', PASSWORD)).status, 429, 'the right password too, from the same /64');
  t.is((await guess(app, '2001:db8:5:7::1', PASSWORD)).status, 200, 'the next /64 is someone else');
});

test('past the budget of all clients, a network that guessed is refused until the hour ends; the proven and other networks are not', async (t) => {
  const app = await start({ MEDIA_PASSWORD_FAILURES_PER_HOUR: '3' });
  // A proven address keeps its access: HTTP Basic repeats the password with every request.
  t.is((await guess(app, '198.51.100.200', PASSWORD)).status, 200);
  const statuses = [];
  for (let i = 1; i <= 6; i += 1) statuses.push((await guess(app, `198.51.100.${i}`, `wrong-${i}`)).status);
  // The fourth wrong password spends the budget; this /24 has had more than 3 this hour.
  t.deepEqual(statuses, [403, 403, 403, 403, 429, 429]);
  const locked = await guess(app, '198.51.100.99', PASSWORD);
  t.is(locked.status, 429, 'the right password from the same network cannot be told apart');
  t.regex(locked.json.message, /this network/);
  const hourEnd = Math.ceil(Date.now() / 3_600_000) * 3_600_000;
  t.true(Math.abs(Number(locked.headers.get('retry-after')) - (hourEnd - Date.now()) / 1000) <= 2);
  t.is((await guess(app, '198.51.100.200', PASSWORD)).status, 200);
  // Another network is still checked: up to NETWORK_FAILURES wrong passwords and one more, then refused.
  const other = [];
  for (let i = 1; i <= 6; i += 1) other.push((await guess(app, `192.0.2.${i}`, `wrong-${i}`)).status);
  t.deepEqual(other, [403, 403, 403, 403, 429, 429]);
  t.is((await guess(app, '203.0.113.5', PASSWORD)).status, 200, 'a third network logs in');
});

test('two /64s guessing at full speed cannot stop the owner\'s new browser from logging in', async (t) => {
  const app = await start({ MEDIA_PASSWORD_FAILURES_PER_HOUR: '15' });
  const attackers = ['2001:db8:aa:1::1', '2001:db8:bb:1::1'];
  const statuses: number[] = [];
  for (const from of attackers) for (let i = 1; i <= 12; i += 1) statuses.push((await guess(app, from, `wrong-${i}`)).status);
  // The first /64 has its ten checks; the second spends the budget of all clients with its sixth
  // wrong password (the sixteenth), and its network, past 3 this hour, is refused from then on.
  t.deepEqual(statuses, [...Array(10).fill(403), 429, 429, ...Array(6).fill(403), ...Array(6).fill(429)]);
  // A fresh /64 of an attacker's /48 is refused, so more addresses there buy no more guesses.
  t.is((await guess(app, '2001:db8:aa:2::1', 'wrong-13')).status, 429);
  t.is((await guess(app, '2001:db8:bb:ffff::1', PASSWORD)).status, 429);
  // The owner, on a network of their own, with a browser that never proved the password.
  const owner = await guess(app, '2001:db8:cc:1::1', PASSWORD);
  t.is(owner.status, 200);
  const mine = await guess(app, '192.0.2.77', PASSWORD);
  t.is(mine.status, 200, 'and from an IPv4 address');
  const login = await call(`${app.urls.media}/login`, { method: 'POST', headers: { 'X-Forwarded-For': '192.0.2.78', 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ password: PASSWORD }) });
  t.is(login.status, 200, 'POST /login too');
  t.truthy(login.json.token);
});

test('at most two password checks run at once; the others are answered 503 at once', async (t) => {
  const verifier = hashedPasswordVerifier(await hashPassword(PASSWORD, { N: 16_384, r: 8, p: 1 }));
  const access = new PrivateAccess({
    verifier, signer: new TokenSigner(Buffer.alloc(32, 7), verifier.fingerprint), tokenTtlSeconds: 60, failuresPerHour: 100,
    limiter: new RateLimiter(new MemoryCounterStore(), silentLogger),
  });
  // Started in one turn of the event loop: every check reaches the gate before any scrypt ends.
  const outcomes = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => access.login(i < 3 ? PASSWORD : `wrong-${i}`, `198.51.100.${i + 1}`)));
  const codes = outcomes.map((o) => (o.status === 'fulfilled' ? 'ok' : (o.reason as ApiError).code));
  t.deepEqual(codes, ['ok', 'ok', 'overloaded', 'overloaded', 'overloaded', 'overloaded']);
  const busy = (outcomes[2] as PromiseRejectedResult).reason as ApiError;
  t.is(busy.status, 503);
  // Once they have ended, checks run again.
  await t.notThrowsAsync(access.login(PASSWORD, '198.51.100.3'));
});
