// The README's commands, run as a newcomer would: `npm run demo`, then every ```sh block of the
// README as it stands, in order, against the demo on free ports (the README says 3000-3002). A
// block is left out only when the line above its fence says why, and only for what installs,
// starts a server or runs the suite (the test starts the demo itself).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import test from 'ava';
import sharp from 'sharp';
import { freePort } from './helpers/redis.ts';
import { ROOT } from './helpers/service.ts';

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

interface Block { heading: string; code: string; notRun: string | null }

/** Every ```sh block, in order, with its section and the reason it is not run (the marker line above its fence). */
const BLOCKS: Block[] = [...README.matchAll(/(?:^<!-- not run by test\/readme\.test\.ts: (.+) -->\n)?^```sh\n([\s\S]*?)^```$/gm)].map((m) => {
  const heading = [...README.slice(0, m.index).matchAll(/^## (.+)$/gm)].at(-1)?.[1] ?? '';
  return { heading, code: m[2], notRun: m[1] ?? null };
});

/** What may be left out: it installs, starts a server (the demo among them) or runs the suite. */
const NOT_PASTABLE = /\bnpm (?:install|ci|start|test|run demo)\b/;

/** A command line's words and operators, quotes kept inside words; `#` comments and line continuations dropped. */
function words(line: string): string[] {
  const out: string[] = [];
  let word = '';
  let quote = '';
  const flush = () => { if (word) out.push(word); word = ''; };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      word += c;
      if (c === quote) quote = '';
    } else if (c === '\'' || c === '"') {
      word += c;
      quote = c;
    } else if (c === '#' && !word) {
      break;
    } else if (/\s/.test(c)) {
      flush();
    } else if ('|;&<>()'.includes(c)) {
      flush();
      out.push(c);
    } else {
      word += c;
    }
  }
  flush();
  return out;
}

/** Each curl command of a block that writes its answer to a file: -o, -O, --output, --remote-name or a `>` redirect (also at the end of its pipeline). */
function curlsWritingFiles(code: string): { command: string; fails: boolean }[] {
  const found = [];
  const until = (tokens: string[], start: number, operators: string) => {
    const end = tokens.findIndex((w, i) => i > start && operators.includes(w));
    return tokens.slice(start + 1, end === -1 ? undefined : end);
  };
  for (const line of code.replace(/\\\n/g, ' ').split('\n')) {
    const tokens = words(line);
    for (let start = tokens.indexOf('curl'); start !== -1; start = tokens.indexOf('curl', start + 1)) {
      const args = until(tokens, start, '|;&()');
      const short = args.filter((a) => /^-[a-zA-Z]+$/.test(a)).join('');
      const writes = /[oO]/.test(short) || args.includes('--output') || args.includes('--remote-name') || until(tokens, start, ';&()').includes('>');
      const fails = short.includes('f') || args.includes('--fail') || args.includes('--fail-with-body');
      if (writes) found.push({ command: line.trim(), fails });
    }
  }
  return found;
}

test('the README leaves out only blocks that install, start a server or run the suite, each with its reason', (t) => {
  t.true(BLOCKS.length >= 4, 'the README\'s ```sh blocks are found');
  for (const block of BLOCKS) {
    if (block.notRun) t.regex(block.code, NOT_PASTABLE, `"${block.heading}": marked not run (${block.notRun}) but it only pastes`);
    else t.notRegex(block.code, NOT_PASTABLE, `"${block.heading}": installs, starts a server or runs the suite; mark it not run, with the reason`);
  }
  t.truthy(BLOCKS.find((b) => b.heading === 'One example per service' && !b.notRun), 'the examples are run');
});

test('every curl of the README that writes a file fails on an HTTP error, instead of saving the error as the file', (t) => {
  const writing = BLOCKS.flatMap((b) => curlsWritingFiles(b.code));
  t.true(writing.length >= 4, 'the README\'s curls that write files are found');
  for (const { command, fails } of writing) t.true(fails, `no --fail: ${command}`);
});

test('the README says near its two commands that npm\'s engine warnings on an older Node are expected, naming the Node it installs', (t) => {
  const firstFive = BLOCKS.find((b) => /\bnpm run demo\b/.test(b.code))!;
  const after = README.slice(README.indexOf(firstFive.code) + firstFive.code.length).split('\n\n').slice(0, 3).join('\n\n');
  t.regex(after, /EBADENGINE/);
  t.regex(after, /install-scripts|install script/);
  // The reason given (the project's own Node, from the `node` package) must stay true.
  const installed = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).dependencies.node as string;
  t.regex(after, new RegExp(`Node ${installed.split('.')[0]}\\b[^]*\`node\` package`));
});

test('the README\'s blocks paste as they stand after `npm run demo`: each command succeeds and each image is what it says', async (t) => {
  const ports = { 3000: await freePort(), 3001: await freePort(), 3002: await freePort() };
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-readme-'));
  // Removed once the demo has ended (teardowns run last first): it writes DATA_DIR as it stops.
  t.teardown(() => fs.rm(dir, { recursive: true, force: true, maxRetries: 5 }));
  // The blocks run in `dir`, the demo in the repository: DATA_DIR makes `data/` the same folder for both.
  const env = {
    PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', DATA_DIR: path.join(dir, 'data'), RENDER_WORKERS: '1',
    SKINS_PORT: String(ports[3000]), MEDIA_PORT: String(ports[3001]), SEARCH_PORT: String(ports[3002]),
  };
  // The README's second command (`npm install` has been run for the suite).
  const demo = spawn('npm', ['run', '-s', 'demo'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  const stopDemo = async () => {
    if (demo.exitCode !== null || demo.signalCode !== null) return;
    // 'close', not 'exit': npm exits before the demo has removed its key and env file; the pipe
    // closes once every process of the group has ended.
    const ended = once(demo, 'close');
    process.kill(-demo.pid!, 'SIGTERM');
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 15_000))]);
  };
  t.teardown(stopDemo);
  const banner: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the demo was not ready in 120 s')), 120_000);
    // Kept reading after 'ready': a full pipe would stop the demo's service mid-write.
    readline.createInterface({ input: demo.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) banner.push(line);
      if (!line.includes('"msg":"ready"')) return;
      clearTimeout(timer);
      resolve();
    });
    demo.once('exit', (code) => reject(new Error(`the demo exited with ${code}`)));
  });

  // A person sees an HTTP error in the output; here a curlrc (not an edit of the commands) makes
  // every curl exit non-zero on one, so the shell's -e fails the block.
  await fs.writeFile(path.join(dir, '.curlrc'), 'fail\nsilent\nshow-error\n');
  let stdout = '';
  const failed: string[] = [];
  // Never an install or a server, even one left unmarked (the first test fails then).
  for (const block of BLOCKS.filter((b) => !b.notRun && !NOT_PASTABLE.test(b.code))) {
    const script = block.code
      .replace(/localhost:(300[0-2])/g, (_, port: '3000' | '3001' | '3002') => `127.0.0.1:${ports[port]}`)
      .replace(/\bnpm run\b/g, `npm --prefix ${JSON.stringify(ROOT)} run`);
    // Each block in a fresh shell, as a reader who starts at its section pastes it; -u fails on a variable it never sets.
    const run = await shell(script, { cwd: dir, env: { ...env, CURL_HOME: dir } });
    if (run.status !== 0) failed.push(`"${block.heading}" exited with ${run.status}:\n${run.stderr}`);
    stdout += run.stdout;
  }
  t.deepEqual(failed, [], 'every block succeeds');
  for (const image of ['ranger.png', 'avatar.png']) {
    t.true((await fs.readFile(path.join(dir, image))).subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), image);
  }
  const still = await fs.readFile(path.join(dir, 'ranger.webp'));
  t.is(still.toString('latin1', 8, 12), 'WEBP', 'the still is a WebP');
  const turntable = await fs.readFile(path.join(dir, 'knight.webp'));
  t.is(turntable.toString('latin1', 8, 12), 'WEBP', 'the turntable is a WebP');
  t.is((await sharp(turntable).metadata()).pages, 36, 'of 36 frames');
  t.true((await fs.stat(path.join(dir, 'secret'))).size > 100, 'the private picture');
  t.regex(stdout, /"name":\s*"\.Pocket_Ranger"/);
  t.regex(stdout, /"name":\s*"Ranger"/);
  t.regex(stdout, /"status":\s*"success"/);
  t.regex(stdout, /"assumed_region":\s*"US"/, 'the search section\'s searches answered');
  const envFile = path.join(env.DATA_DIR, 'demo.env');
  t.true(banner.some((line) => line.includes(envFile)), `the demo names its env file:\n${banner.join('\n')}`);

  // The demo's key and file last as long as the run: a lifetime key must not outlive it.
  await stopDemo();
  t.false(existsSync(envFile), 'the env file is removed');
  const { keys } = JSON.parse(await fs.readFile(path.join(env.DATA_DIR, 'search-keys.json'), 'utf8')) as { keys: { name: string }[] };
  t.deepEqual(keys.map((k) => k.name), ['mine'], 'the demo\'s key is removed, the search section\'s own stays');
});

test('the README\'s test command is the one .ci/run runs', (t) => {
  const block = BLOCKS.find((b) => b.heading === 'Running it for real');
  t.regex(block?.code ?? '', /^npm test\b/m);
  t.regex(readFileSync(path.join(ROOT, '.ci/run'), 'utf8'), /^npm test$/m);
});

/** `bash -euo pipefail -c script`, read as it runs (a child's output is never left to fill a pipe). */
async function shell(script: string, options: { cwd: string; env: Record<string, string> }): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  const failed: string[] = [];
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk; });
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk; });
  const [status] = await once(child, 'close');
  return { status: status as number | null, stdout, stderr };
}
