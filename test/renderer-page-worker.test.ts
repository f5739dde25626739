// One page's one-thread Piscina as the farm drives it, on a real Chromium: two batches on the
// thread at once, and what aborting one does to the thread, the other batch and the next task.
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { launchBrowser } from '../renderer/browser.ts';
import { toWireJob, type WireJob, type WorkerTask } from '../renderer/jobs.ts';
import { PageWorker } from '../renderer/page-worker.ts';
import { normalizeSkin } from '../renderer/skin-normalize.ts';
import { drawSkin } from '../scripts/fake-upstream/skin-art.ts';
import { createLogger } from '../shared/log.ts';

const isPng = (b: Uint8Array) => Buffer.from(b).subarray(1, 4).equals(Buffer.from('PNG'));

test('an aborted task ends its thread, failing the other batch it held; the next task gets a fresh thread and page, and the old page is handed back', async (t) => {
  const browser = await launchBrowser(null, 'off', createLogger('warn', {}, () => {}));
  const orphaned: string[] = [];
  // Its pages spin forever on a job of size 33.
  const worker = new PageWorker(0, 2, fileURLToPath(new URL('helpers/page-that-hangs.js', import.meta.url)), (targetId) => orphaned.push(targetId));
  try {
    const skin = await normalizeSkin(await drawSkin({}));
    const job = toWireJob({ kind: 'render', skin, slim: false, size: 64, yaw: 20, pitch: 10, shadow: true, outer: true, bg: null });
    const task = (jobs: WireJob[], probe?: WorkerTask['probe']): WorkerTask => ({ browsers: [{ key: browser.key, pid: browser.pid }], jobs, pageHeapLimitBytes: 1 << 30, selfCheck: null, probe });

    t.regex((await worker.run(task([], 'info'), new AbortController().signal)).info!.renderer, /SwiftShader/);
    const first = worker.targetId;
    t.truthy(first, 'the thread told the page it opened');
    t.is(worker.opened, 1);

    // Both batches go to the thread at once (the page spins on the first); a batch still waiting
    // in Piscina's queue would instead run on the next thread and succeed.
    const timer = new AbortController();
    const stuck = worker.run(task([{ ...job, size: 33 }]), timer.signal);
    const other = worker.run(task([job]), new AbortController().signal);
    timer.abort(new Error('the job timed out'));
    await t.throwsAsync(stuck, { name: 'AbortError' });
    await t.throwsAsync(other, { message: /Terminating worker thread/ });

    const { images } = await worker.run(task([job]), new AbortController().signal);
    t.true(isPng(images![0] as Uint8Array));
    t.is(worker.opened, 2, 'a fresh thread opened a fresh page');
    t.not(worker.targetId, first);
    t.deepEqual(orphaned, [first], 'the page the ended thread left behind is handed back to be closed');
  } finally {
    await worker.terminate();
    await browser.close();
  }
});
