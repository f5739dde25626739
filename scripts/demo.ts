// `npm run demo`: the fake upstream plus every service pointed at it, so every endpoint works
// with no network. Stops both on Ctrl-C.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeUpstream } from './fake-upstream/server.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fake = await startFakeUpstream({ port: Number(process.env.FAKE_UPSTREAM_PORT ?? 0) });
const skinsPort = process.env.SKINS_PORT ?? '3000';
const env = {
  ...process.env,
  ...fake.env,
  DEMO_PLAYER: process.env.DEMO_PLAYER ?? 'SlimAlex',
  OAUTH_CLIENT_ID: process.env.OAUTH_CLIENT_ID ?? 'skinfarm-demo',
  OAUTH_CLIENT_SECRET: process.env.OAUTH_CLIENT_SECRET ?? 'demo-secret',
  OAUTH_REDIRECT_URL: process.env.OAUTH_REDIRECT_URL ?? `http://localhost:${skinsPort}/oauth/external/callback`,
};
console.log(`fake upstream on ${fake.baseUrl}`);
for (const [name, value] of Object.entries(fake.env)) console.log(`  ${name}=${value}`);
console.log(`try: curl localhost:${skinsPort}/v1/player/SlimAlex`);

const app = spawn(process.execPath, [path.join(root, 'api/main.ts')], { env, stdio: 'inherit' });
const stop = () => app.kill('SIGTERM');
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
app.on('exit', async (code) => {
  await fake.close();
  process.exit(code ?? 0);
});
