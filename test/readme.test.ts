// The README's commands, run as a newcomer would: `npm run demo`, then the examples of "One
// example per service" in a shell, against the demo on free ports (the README says 3000-3002).
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import test from 'ava';
import sharp from 'sharp';
import { freePort } from './helpers/redis.ts';
import { ROOT } from './helpers/service.ts';

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The first ```sh block after a heading. */
function shellBlock(heading: string): string {
  const section = README.slice(README.indexOf(`\n## ${heading}\n`));
  const match = /```sh\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error(`no sh block under "${heading}"`);
  return match[1];
}

test('the README\'s examples run against `npm run demo`: each command succeeds and each image is a PNG', async (t) => {
  const ports = { 3000: await freePort(), 3001: await freePort(), 3002: await freePort() };
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-readme-'));
  // Removed once the demo has ended (teardowns run last first): it writes DATA_DIR as it stops.
  t.teardown(() => fs.rm(dir, { recursive: true, force: true, maxRetries: 5 }));
  const env = {
    PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', DATA_DIR: path.join(dir, 'data'), RENDER_WORKERS: '1',
    SKINS_PORT: String(ports[3000]), MEDIA_PORT: String(ports[3001]), SEARCH_PORT: String(ports[3002]), MEDIA_PASSWORD: 'readme-media-password',
  };
  // The README's own two commands: `npm install` has been run for the suite; this is the second.
  const demo = spawn('npm', ['run', '-s', 'demo'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  t.teardown(async () => {
    if (demo.exitCode !== null || demo.signalCode !== null) return;
    const exited = once(demo, 'exit');
    process.kill(-demo.pid!, 'SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the demo was not ready in 120 s')), 120_000);
    readline.createInterface({ input: demo.stdout! }).on('line', (line) => {
      if (!line.includes('"msg":"ready"')) return;
      clearTimeout(timer);
      resolve();
    });
    demo.once('exit', (code) => reject(new Error(`the demo exited with ${code}`)));
  });

  const script = shellBlock('One example per service')
    .replace(/localhost:(300[0-2])/g, (_, port: '3000' | '3001' | '3002') => `127.0.0.1:${ports[port]}`)
    // A failed HTTP answer must fail the command, as a person would see it fail.
    .replace(/^curl /gm, 'curl -fsS ')
    .replace(/\bnpm run\b/g, `npm --prefix ${JSON.stringify(ROOT)} run`);
  const run = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir, env, encoding: 'utf8', timeout: 120_000 });
  t.is(run.status, 0, `${run.stderr}\n${script}`);
  for (const image of ['ranger.png', 'avatar.png']) {
    t.true((await fs.readFile(path.join(dir, image))).subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), image);
  }
  const still = await fs.readFile(path.join(dir, 'ranger.webp'));
  t.is(still.toString('latin1', 8, 12), 'WEBP', 'the still is a WebP');
  const turntable = await fs.readFile(path.join(dir, 'knight.webp'));
  t.is(turntable.toString('latin1', 8, 12), 'WEBP', 'the turntable is a WebP');
  t.is((await sharp(turntable).metadata()).pages, 36, 'of 36 frames');
  t.regex(run.stdout, /"name":\s*"\.Pocket_Ranger"/);
  t.true((await fs.stat(path.join(dir, 'secret'))).size > 100, 'the private picture');
  t.regex(run.stdout, /"name":\s*"Ranger"/);
  t.regex(run.stdout, /"status":\s*"success"/);
});

test('the README\'s test command is the one .ci/run runs', (t) => {
  const command = /^npm test\b/m.exec(shellBlock('Running it for real'));
  t.truthy(command);
  t.regex(readFileSync(path.join(ROOT, '.ci/run'), 'utf8'), /^npm test$/m);
});
