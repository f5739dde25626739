// Chromium that dies while starting (as it did now and then under load) is started again; one
// that never starts fails after a bounded number of tries. A wrapper script stands in for the
// executable and crashes the way Chromium did (killed by a signal) for its first runs.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { launchBrowser, resolveChromium } from '../renderer/browser.ts';
import { createLogger } from '../shared/log.ts';

async function flakyChromium(crashes: number): Promise<{ executable: string; runs: () => number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skinfarm-flaky-'));
  const real = (await resolveChromium(null)).executablePath;
  const executable = path.join(dir, 'chromium');
  writeFileSync(executable, `#!/bin/sh
n=$(cat "${dir}/runs" 2>/dev/null || echo 0)
echo $((n + 1)) > "${dir}/runs"
if [ "$n" -lt ${crashes} ]; then kill -SEGV $$; fi
exec "${real}" "$@"
`);
  chmodSync(executable, 0o755);
  return { executable, runs: () => Number(readFileSync(path.join(dir, 'runs'), 'utf8')) };
}

test('a Chromium that crashes while starting is started again', async (t) => {
  const { executable, runs } = await flakyChromium(2);
  const lines: string[] = [];
  const browser = await launchBrowser(executable, 'off', createLogger('warn', {}, (line) => lines.push(line)));
  try {
    t.is(runs(), 3);
    t.true(await browser.alive());
    t.is(lines.filter((line) => line.includes('chromium did not start')).length, 2);
  } finally {
    await browser.close();
  }
});

test('a Chromium that never starts fails after three tries', async (t) => {
  const { executable, runs } = await flakyChromium(100);
  await t.throwsAsync(launchBrowser(executable, 'off', createLogger('error')), { message: /Failed to launch/ });
  t.is(runs(), 3);
});

// A fresh machine's first start: @sparticuz/chromium unpacks into the temporary directory, and
// processes (and browsers of one process) starting together once ran a binary still being written.
test('processes starting together on a fresh machine each run the bundled Chromium, unpacked once', async (t) => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'skinfarm-fresh-tmp-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const script = `
    import { execFileSync } from 'node:child_process';
    import { bundledChromium } from ${JSON.stringify(new URL('../renderer/bundled-chromium.ts', import.meta.url).href)};
    const paths = await Promise.all([bundledChromium(), bundledChromium()]);
    for (const binary of paths) process.stdout.write(execFileSync(binary, ['--headless=new', '--no-sandbox', '--version'], { encoding: 'utf8', timeout: 60_000 }));`;
  const run = () => new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '--eval', script], { env: { ...process.env, TMPDIR: tmp }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => { out += chunk; });
    child.stderr.on('data', (chunk) => { out += chunk; });
    child.on('close', (code) => resolve({ code, out }));
  });
  for (const { code, out } of await Promise.all([run(), run(), run()])) {
    t.is(code, 0, out);
    t.is(out.match(/Chromium \d+/g)?.length, 2, out);
  }
  const marker = path.join(tmp, 'chromium.skinfarm-ready');
  const version = JSON.parse(readFileSync(new URL('../node_modules/@sparticuz/chromium/package.json', import.meta.url), 'utf8')).version;
  t.is(readFileSync(marker, 'utf8'), `@sparticuz/chromium ${version}\n`);
  t.false(existsSync(path.join(tmp, 'chromium.skinfarm-lock')));
  // Another version's copy (after an upgrade: here a stand-in that is no Chromium) is replaced.
  rmSync(path.join(tmp, 'chromium'));
  writeFileSync(path.join(tmp, 'chromium'), '#!/bin/sh\necho old\n', { mode: 0o755 });
  writeFileSync(marker, '@sparticuz/chromium 1.0.0\n');
  const again = await run();
  t.is(again.code, 0, again.out);
  t.is(again.out.match(/Chromium \d+/g)?.length, 2, again.out);
  t.is(readFileSync(marker, 'utf8'), `@sparticuz/chromium ${version}\n`);
  // A process killed while unpacking left its lock and no marker: the lock is taken over once old.
  rmSync(marker);
  const lock = path.join(tmp, 'chromium.skinfarm-lock');
  mkdirSync(lock);
  const longAgo = new Date(Date.now() - 10 * 60_000);
  utimesSync(lock, longAgo, longAgo);
  const after = await run();
  t.is(after.code, 0, after.out);
  t.is(readFileSync(marker, 'utf8'), `@sparticuz/chromium ${version}\n`);
  t.false(existsSync(lock));
});
