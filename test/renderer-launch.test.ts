// Chromium that dies while starting (as it did now and then under load) is started again; one
// that never starts fails after a bounded number of tries. A wrapper script stands in for the
// executable and crashes the way Chromium did (killed by a signal) for its first runs.
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
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
