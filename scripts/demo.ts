// `npm run demo`: the fake upstream plus every service pointed at it, so every endpoint works
// with no network. Private media gets a fresh password per run (printed) unless one is set, and
// search a key made for the run; both go to DATA_DIR/demo.env, which the README's examples
// source in another terminal. Stops everything on Ctrl-C and removes the key and the file.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, loadConfig, type Config } from '../api/config.ts';
import { connectRedis } from '../api/redis.ts';
import { parseCreateInput } from '../api/search/keys/model.ts';
import { openKeyStore, type KeyStore } from '../api/search/keys/store.ts';
import { createLogger } from '../shared/log.ts';
import { startFakeUpstream } from './fake-upstream/server.ts';
import { launch, ROOT } from './launch.ts';

const fake = await startFakeUpstream({ port: Number(process.env.FAKE_UPSTREAM_PORT ?? 0) });
const skinsPort = process.env.SKINS_PORT ?? '3000';
const mediaPort = process.env.MEDIA_PORT ?? '3001';
const demoPlayer = process.env.DEMO_PLAYER ?? 'Knight';
// Random, not a fixed word: a demo left running on a reachable host must not open to a known password.
const ownPassword = Boolean(process.env.MEDIA_PASSWORD || process.env.MEDIA_PASSWORD_HASH);
const mediaPassword = ownPassword ? null : `demo-${randomBytes(9).toString('base64url')}`;
const env = {
  ...process.env,
  ...fake.env,
  DEMO_PLAYER: demoPlayer,
  OAUTH_CLIENT_ID: process.env.OAUTH_CLIENT_ID ?? 'skinfarm-demo',
  OAUTH_CLIENT_SECRET: process.env.OAUTH_CLIENT_SECRET ?? 'demo-secret',
  OAUTH_REDIRECT_URL: process.env.OAUTH_REDIRECT_URL ?? `http://localhost:${skinsPort}/oauth/external/callback`,
  ...(mediaPassword ? { MEDIA_PASSWORD: mediaPassword } : {}),
};
const config = ((): Config => {
  try {
    return loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`demo: ${error.message}`);
    process.exit(78);
  }
})();
// As the service sees it: it runs in the repository whatever directory the demo was started from.
const dataDir = path.resolve(ROOT, config.dataDir);

/** The search keys on the service's store (Redis when REDIS_URL is set), for one use. */
async function withKeyStore<T>(use: (store: KeyStore) => Promise<T>): Promise<T> {
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, createLogger('warn'), { ...config.redis, name: 'REDIS_URL' }) : null;
  const store = openKeyStore(dataDir, redis);
  try {
    return await use(store);
  } finally {
    await store.close?.();
    if (redis?.isOpen) await redis.quit();
  }
}

// The key lives as long as the run: a lifetime premium key must not outlast the demo (one that a
// killed run left behind is removed here).
const DEMO_KEY = 'npm run demo';
const searchKey = await withKeyStore(async (store) => {
  for (const old of await store.list()) if (old.name === DEMO_KEY) await store.delete(old.id);
  return store.create(parseCreateInput({ name: DEMO_KEY, plan: 'premium', duration: 'lifetime' }));
});
const envFile = path.join(dataDir, 'demo.env');
await fs.mkdir(dataDir, { recursive: true });
// A password of one's own is never written (nor printed): that shell has it already.
await fs.writeFile(envFile, [
  '# Written by `npm run demo` for this run only (removed when it stops): the README\'s examples source it.',
  mediaPassword ? `MEDIA_PASSWORD='${mediaPassword}'` : '# MEDIA_PASSWORD: your own, from the environment the demo was started in',
  `KEY='${searchKey.key}'   # a search API key`,
  '',
].join('\n'), { mode: 0o600 });
const shownFile = path.relative(process.env.INIT_CWD ?? process.cwd(), envFile);

console.log(`fake upstream on ${fake.baseUrl}`);
for (const [name, value] of Object.entries(fake.env)) console.log(`  ${name}=${value}`);
console.log(`try: curl localhost:${skinsPort}/v1/player/${encodeURIComponent(demoPlayer)}   (a Bedrock player: /v1/player/.Pocket_Ranger)`);
console.log(mediaPassword
  ? `media password (this run only): ${mediaPassword}   try: curl --fail -u any:${mediaPassword} -o secret 'localhost:${mediaPort}/?sim=vault'`
  : 'media password: yours (MEDIA_PASSWORD or MEDIA_PASSWORD_HASH from the environment)');
console.log(`the README's examples, in another terminal: source ${shownFile.startsWith('..') ? envFile : shownFile}   (MEDIA_PASSWORD and KEY, a search key, for this run)`);

const app = await launch(env, { inherit: true });
const stop = () => void app.stop();
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
app.process.on('exit', async (code) => {
  await fake.close();
  await withKeyStore((store) => store.delete(searchKey.record.id)).catch((error: Error) => {
    console.error(`demo: the search key "${DEMO_KEY}" stays until the next run removes it: ${error.message}`);
  });
  await fs.rm(envFile, { force: true });
  process.exit(code ?? 0);
});
