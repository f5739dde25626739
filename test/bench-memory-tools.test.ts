// bench:memory's view of a process tree, on this machine's /proc: real processes, real numbers.
import test from 'ava';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { groupOf, processTree, sampleTree } from '../scripts/bench/process-memory.ts';

// Reads /proc: Linux only.
(process.platform === 'linux' ? test : test.skip)('a process tree is sampled with RSS and PSS, the root as the API and a child below it', async (t) => {
  const child = spawn('sleep', ['30']);
  t.teardown(() => child.kill());
  await once(child, 'spawn');
  t.true(processTree(process.pid).includes(child.pid!));
  const samples = sampleTree(process.pid);
  const self = samples.find((s) => s.pid === process.pid)!;
  t.is(self.group, 'api');
  t.true(self.rssKb > 10_000 && self.pssKb > 0 && self.pssKb <= self.rssKb, `${self.rssKb} kB RSS, ${self.pssKb} kB PSS`);
  t.like(samples.find((s) => s.pid === child.pid), { group: 'other' });
});

test('Chromium processes are grouped by their --type, with either argument separator', (t) => {
  t.is(groupOf(10, 1, '/tmp/chromium\0--headless=new\0--no-sandbox'), 'browser');
  t.is(groupOf(11, 1, '/tmp/chromium --type=renderer --lang=en'), 'renderer');
  t.is(groupOf(12, 1, '/tmp/chromium\0--type=gpu-process\0--use-angle=swiftshader'), 'gpu');
  t.is(groupOf(13, 1, '/tmp/chromium --type=zygote --no-sandbox'), 'other');
  t.is(groupOf(14, 1, '/tmp/chrome_crashpad_handler --database=/tmp/x'), 'other');
  t.is(groupOf(1, 1, '/usr/bin/node\0api/main.ts'), 'api');
});
