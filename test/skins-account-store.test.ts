// Sessions in Redis, watched from Redis itself (keyspace events on the session keys): anonymous
// traffic writes nothing and gets no session cookie; a login writes one session, under the hash of
// its id, over a new id; account calls and token refreshes never move its end (the stored
// `_expire`, the key's TTL, the cookie).
import { createHash } from 'node:crypto';
import { createClient, type RedisClientType } from '@redis/client';
import test from 'ava';
import { CookieJar, type JarResponse } from './helpers/cookie-jar.ts';
import { redisUnavailableReason, startRedis, type TestRedis } from './helpers/redis.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

const skip = redisUnavailableReason();
if (skip) console.log(skip);
const maybe = skip ? test.skip : test.serial;

const REDIRECT = 'http://127.0.0.1:1/oauth/external/callback';
const WEEK_MS = 7 * 86_400_000;
const PREFIX = 'skinfarm:session:';
const CHANNEL = `__keyspace@0__:${PREFIX}`;
const MARK = `${PREFIX}test-mark`;

let redis: TestRedis;
let admin: RedisClientType;
let events: RedisClientType;
let h: SkinsHarness;
let seen: string[] = [];

test.before(async () => {
  if (skip) return;
  redis = await startRedis();
  admin = createClient({ url: redis.url });
  await admin.connect();
  await admin.configSet('notify-keyspace-events', 'KA');
  events = admin.duplicate();
  await events.connect();
  await events.pSubscribe(`${CHANNEL}*`, (event, channel) => seen.push(`${event} ${PREFIX}${channel.slice(CHANNEL.length)}`));
  // 20 s access tokens: inside the 30 s margin, so every account call refreshes first.
  h = await startSkins({ REDIS_URL: redis.url, OAUTH_CLIENT_ID: 'store', OAUTH_CLIENT_SECRET: 'store-secret', OAUTH_REDIRECT_URL: REDIRECT },
    { oauth: { clientId: 'store', clientSecret: 'store-secret', redirectUris: [REDIRECT], autoApprove: true, tokenTtlSeconds: 20 } });
});
test.after.always(async () => {
  await h?.stop();
  await events?.quit();
  await admin?.quit();
  await redis?.stop();
});

/**
 * The writes to session keys since the last call. Redis runs commands one after another and
 * tells of them in that order: once the event of a mark written now arrives, every write the
 * requests answered so far made has been told.
 */
async function writes(): Promise<string[]> {
  await admin.set(MARK, '1');
  for (let step = 0; !seen.includes(`set ${MARK}`); step++) {
    if (step > 1500) throw new Error('the keyspace event of the mark never came');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await admin.del(MARK);
  const told = seen.filter((e) => !e.endsWith(MARK));
  seen = [];
  return told;
}

async function sessionKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const batch of admin.scanIterator({ MATCH: `${PREFIX}*` })) keys.push(...batch);
  return keys.filter((k) => k !== MARK);
}

/** What one SET with a TTL tells. */
const stored = (key: string) => [`set ${key}`, `expire ${key}`];
const keyOf = (id: string) => PREFIX + createHash('sha256').update(id).digest('base64url');
const sessionCookie = (r: JarResponse) => r.headers.getSetCookie().find((c) => c.startsWith('skinfarm.sid='));

/** Every anonymous request the account and page routes answer, in order. */
async function anonymousVisit(browser: CookieJar): Promise<JarResponse[]> {
  const answers: JarResponse[] = [];
  for (const path of ['/', '/v1/me', '/v1/me/profiles', '/v1/me/verification', '/v1/me/premium']) answers.push(await browser.go(`${h.base}${path}`));
  answers.push(await browser.postJson(`${h.base}/v1/me/token`, { uuid: '0123456789abcdef0123456789abcdef' }));
  const start = await browser.go(`${h.base}/oauth/external`);
  const state = new URL(start.location!).searchParams.get('state')!;
  answers.push(start, await browser.go(`${h.base}/oauth/external/callback?code=x&state=forged`, { headers: { accept: 'application/json' } }));
  answers.push(await browser.go(`${h.base}/oauth/external/callback?error=access_denied&state=${state}`, { headers: { accept: 'application/json' } }));
  answers.push(await browser.go(`${h.base}/oauth/logout`));
  return answers;
}

maybe('anonymous traffic, with no cookie or the cookie of an ended session, writes no session and is given none', async (t) => {
  const ended = new CookieJar();
  t.is((await ended.login(h.base)).status, 302);
  const cookies = [...ended.cookies];
  t.is((await ended.go(`${h.base}/oauth/logout`)).status, 302);
  for (const [name, value] of cookies) ended.cookies.set(name, value);
  t.like((await ended.go(`${h.base}/v1/me`)).json.data, { logged_in: false }, 'a validly signed cookie of an ended session');
  await writes();

  for (const browser of [new CookieJar(), ended]) {
    const answers = await anonymousVisit(browser);
    t.deepEqual(answers.map((r) => r.status), [200, 200, 200, 401, 401, 401, 302, 400, 403, 302]);
    // Logout may clear the cookie; nothing sets one.
    t.deepEqual(answers.map(sessionCookie).filter((c) => c && !/^skinfarm\.sid=;/.test(c)), []);
  }
  t.deepEqual(await writes(), [], 'not one write to a session key');
  t.deepEqual(await sessionKeys(), []);
});

maybe('a login writes one session under the hash of its id; account calls and refreshes never move its end', async (t) => {
  const browser = new CookieJar();
  await writes();
  const before = Date.now();
  const login = await browser.login(h.base);
  const after = Date.now();
  const id = browser.cookies.get('skinfarm.sid')!;
  const key = keyOf(id);
  t.deepEqual(await writes(), stored(key), 'one write, under SHA-256 of the id');
  t.false((await sessionKeys()).some((k) => k.includes(id)), 'the id is in no key');
  const data = JSON.parse((await admin.get(key))!);
  t.false(JSON.stringify(data).includes(id), 'nor is the id in the data');
  t.true(data._expire >= before + WEEK_MS && data._expire <= after + WEEK_MS, 'the end: 7 days after the login');
  const expires = Date.parse(/expires=([^;]+)/i.exec(sessionCookie(login)!)![1]);
  t.true(Math.abs(expires - data._expire) < 1000, 'the cookie ends with the session');
  const ttl = await admin.pTTL(key);

  const answers = [await browser.go(`${h.base}/v1/me`), await browser.go(`${h.base}/v1/me/profiles`)];
  const uuid = answers[1].json.data.profiles[0].id;
  answers.push(await browser.go(`${h.base}/v1/me/verification`), await browser.postJson(`${h.base}/v1/me/token`, { uuid }), await browser.go(`${h.base}/`));
  t.deepEqual(answers.map((r) => r.status), [200, 200, 200, 200, 200]);
  t.deepEqual(answers.map(sessionCookie).filter(Boolean), [], 'no cookie is sent again, so its end stays');

  const told = await writes();
  const now = JSON.parse((await admin.get(key))!);
  t.not(now.auth.accessToken, data.auth.accessToken, 'the tokens were refreshed');
  t.true(told.length >= 2 && told.every((e) => stored(key).includes(e)), told.join(', '));
  t.is(now._expire, data._expire, 'the end is the one set at login');
  t.true(await admin.pTTL(key) < ttl, 'the store\'s TTL only ran down');

  // An hour before its end (as if the week had passed): still not renewed.
  const late = Date.now() + 3_600_000;
  await admin.set(key, JSON.stringify({ ...now, _expire: late }), { expiration: 'KEEPTTL' });
  await writes();
  const lateAnswers = [await browser.go(`${h.base}/v1/me`), await browser.go(`${h.base}/v1/me/verification`)];
  t.deepEqual(lateAnswers.map((r) => r.status), [200, 200]);
  t.deepEqual(lateAnswers.map(sessionCookie).filter(Boolean), []);
  t.true((await writes()).every((e) => stored(key).includes(e)));
  t.is(JSON.parse((await admin.get(key))!)._expire, late, 'near its end the session is not renewed');
});

maybe('a login over a live session destroys it and gives a new id; logout destroys the new one', async (t) => {
  const browser = new CookieJar();
  await browser.login(h.base);
  const first = browser.cookies.get('skinfarm.sid')!;
  const planted = [...browser.cookies];
  await writes();

  t.is((await browser.login(h.base)).status, 302);
  const second = browser.cookies.get('skinfarm.sid')!;
  t.not(second, first);
  t.deepEqual(await writes(), [`del ${keyOf(first)}`, ...stored(keyOf(second))]);
  const old = new CookieJar();
  for (const [name, value] of planted) old.cookies.set(name, value);
  t.like((await old.go(`${h.base}/v1/me`)).json.data, { logged_in: false }, 'the old id is worth nothing');

  t.is((await browser.go(`${h.base}/oauth/logout`)).status, 302);
  t.deepEqual(await writes(), [`del ${keyOf(second)}`]);
  t.false(browser.cookies.has('skinfarm.sid'));
  const keys = await sessionKeys();
  t.false(keys.includes(keyOf(first)) || keys.includes(keyOf(second)));
});
