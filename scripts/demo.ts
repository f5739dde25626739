// `npm run demo`: the fake upstream plus every service pointed at it, so every endpoint works
// with no network. Private media gets a fresh password per run (printed) unless one is set.
// Stops both on Ctrl-C.
import { randomBytes } from 'node:crypto';
import { startFakeUpstream } from './fake-upstream/server.ts';
import { launch } from './launch.ts';

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
console.log(`fake upstream on ${fake.baseUrl}`);
for (const [name, value] of Object.entries(fake.env)) console.log(`  ${name}=${value}`);
console.log(`try: curl localhost:${skinsPort}/v1/player/${encodeURIComponent(demoPlayer)}   (a Bedrock player: /v1/player/.Pocket_Ranger)`);
console.log(mediaPassword
  ? `media password (this run only): ${mediaPassword}   try: curl -u any:${mediaPassword} -o secret 'localhost:${mediaPort}/?sim=vault'`
  : 'media password: yours (MEDIA_PASSWORD or MEDIA_PASSWORD_HASH from the environment)');

const app = await launch(env, { inherit: true });
const stop = () => void app.stop();
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
app.process.on('exit', async (code) => {
  await fake.close();
  process.exit(code ?? 0);
});
