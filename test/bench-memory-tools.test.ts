// bench:memory's view of a process tree, on this machine's /proc: real processes, real numbers.
import test from 'ava';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { groupOf, processTree, sampleTree, threadCpuOfTree, threadSecondsBetween } from '../scripts/bench/process-memory.ts';

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

// Reads /proc: Linux only.
(process.platform === 'linux' ? test : test.skip)('threads are read by name with their CPU, and the CPU between two readings is counted per thread name', async (t) => {
  const before = threadCpuOfTree(process.pid);
  const main = before.find((th) => th.tid === process.pid)!;
  t.like(main, { pid: process.pid, group: 'api' });
  t.true(main.thread.length > 0);
  // Work on this thread only, until the kernel has counted a tick of it.
  const spinUntil = (done: () => boolean) => { while (!done()) for (let i = 0; i < 1e5; i += 1) Math.sqrt(i); };
  spinUntil(() => threadCpuOfTree(process.pid).find((th) => th.tid === process.pid)!.seconds > main.seconds);
  const between = threadSecondsBetween(before, threadCpuOfTree(process.pid));
  t.true(between.get(`api:${main.thread}`)! > 0);
  // A thread not in the first reading counts from zero; one gone by the second counts not at all.
  const later = [{ pid: 1, tid: 2, group: 'gpu' as const, thread: 'Thread<00>', seconds: 0.5 }];
  t.deepEqual(threadSecondsBetween([{ pid: 1, tid: 3, group: 'gpu', thread: 'Thread<00>', seconds: 9 }], later), new Map([['gpu:Thread<00>', 0.5]]));
});
