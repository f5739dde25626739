// `npm run demo` (scripts/demo.ts) as a newcomer runs it: it prints a media password and that
// password opens the private sample category; a MEDIA_PASSWORD of one's own is kept and not printed.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import readline from 'node:readline';
import test from 'ava';
import { removeTempDirs, tempDir } from './helpers/media-library.ts';
import { freePort } from './helpers/redis.ts';
import { ROOT, call } from './helpers/service.ts';

interface Demo { lines: string[]; media: string; skins: string; stop(): Promise<void> }

const running: ChildProcess[] = [];
test.after.always(async () => {
  for (const child of running) if (child.exitCode === null) child.kill('SIGTERM');
  await removeTempDirs();
});

/** Starts the demo on free ports and resolves once its services are ready and media is indexed. */
async function startDemo(extra: Record<string, string> = {}): Promise<Demo> {
  const dir = await tempDir('pages-demo');
  const [skinsPort, mediaPort, searchPort] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(process.execPath, [path.join(ROOT, 'scripts/demo.ts')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', RENDER_WORKERS: '0',
      SKINS_PORT: String(skinsPort), MEDIA_PORT: String(mediaPort), SEARCH_PORT: String(searchPort),
      MEDIA_DIR: path.join(dir, 'media'), DATA_DIR: path.join(dir, 'data'), SESSION_SECRET: 'demo-test-session-secret-0123', ...extra,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  const lines: string[] = [];
  await new Promise<void>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      // Ready, and the media library indexed (its port answers 503 until then).
      if (lines.some((l) => l.includes('"msg":"ready"')) && lines.some((l) => l.includes('"msg":"media library indexed"'))) resolve();
    });
    child.stderr!.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
    child.once('exit', (code) => reject(new Error(`demo exited with ${code}:\n${lines.join('\n')}`)));
  });
  return {
    lines,
    media: `http://127.0.0.1:${mediaPort}`,
    skins: `http://127.0.0.1:${skinsPort}`,
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

const basic = (password: string) => ({ authorization: `Basic ${Buffer.from(`any:${password}`).toString('base64')}` });

test('the demo prints a media password that opens the private sample category', async (t) => {
  const demo = await startDemo();
  const line = demo.lines.find((l) => l.startsWith('media password'));
  const password = /^media password \(this run only\): (\S+)/.exec(line ?? '')?.[1];
  t.truthy(password, demo.lines.join('\n'));
  const opened = await call(`${demo.media}/?sim=vault&format=json`, { headers: basic(password!) });
  t.is(opened.status, 200);
  t.like(opened.json, { alias: 'vault', private: true });
  t.is((await call(`${demo.media}/?sim=vault&format=json`, { headers: basic(`${password}x`) })).status, 403);
  t.is((await call(`${demo.media}/?sim=vault&format=json`)).status, 401);
  await demo.stop();

  const again = await startDemo();
  const second = again.lines.find((l) => l.startsWith('media password'));
  t.not(second, line, 'a new password per run');
  await again.stop();
});

test('a MEDIA_PASSWORD of ones own is used and never printed', async (t) => {
  const demo = await startDemo({ MEDIA_PASSWORD: 'my-own-demo-password' });
  t.false(demo.lines.some((l) => l.includes('my-own-demo-password')));
  t.true(demo.lines.some((l) => l.startsWith('media password: yours')));
  t.is((await call(`${demo.media}/?sim=vault&format=json`, { headers: basic('my-own-demo-password') })).status, 200);
  await demo.stop();
});
