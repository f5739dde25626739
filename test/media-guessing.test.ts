// Password guessing against private media, as a patient attacker with many addresses would try:
// an IPv6 /64 counts as one client, wrong passwords from everyone share an hourly budget, and
// only two password checks run at once.
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

test('wrong passwords from all addresses together end in 429 for every new check until the hour ends', async (t) => {
  const app = await start({ MEDIA_PASSWORD_FAILURES_PER_HOUR: '3' });
  // A proven address keeps its access: HTTP Basic repeats the password with every request.
  t.is((await guess(app, '198.51.100.200', PASSWORD)).status, 200);
  const statuses = [];
  for (let i = 1; i <= 6; i += 1) statuses.push((await guess(app, `198.51.100.${i}`, `wrong-${i}`)).status);
  t.deepEqual(statuses, [403, 403, 403, 403, 429, 429]);
  const locked = await guess(app, '198.51.100.99', PASSWORD);
  t.is(locked.status, 429, 'the right password from a new address cannot be told apart');
  t.regex(locked.json.message, /all clients/);
  t.true(Number(locked.headers.get('retry-after')) > 0);
  t.is((await guess(app, '198.51.100.200', PASSWORD)).status, 200);
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
