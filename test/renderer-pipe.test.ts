// No DevTools port: the farm's Chromium processes speak CDP over a pipe only, so no local process
// (of any user) can connect to a browser and drive it. Checked in /proc for every process of the
// farm's browsers (the browser, its zygotes, GPU, network and renderer processes): the browser's
// command line, the TCP sockets each holds in the LISTEN state, and no DevToolsActivePort file;
// with a browser per page and with two pages sharing one, whose relaunch after a kill is checked too.
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { RenderFarm } from '../renderer/farm.ts';
import type { RenderJob } from '../renderer/jobs.ts';
import { normalizeSkin } from '../renderer/skin-normalize.ts';
import { drawSkin } from '../scripts/fake-upstream/skin-art.ts';
import { createLogger } from '../shared/log.ts';
import { descendants, readProc, tcpListeners } from './helpers/processes.ts';

const isPng = (b: Buffer) => b.subarray(1, 4).equals(Buffer.from('PNG'));

async function jobs(count: number): Promise<RenderJob[]> {
  const skin = await normalizeSkin(await drawSkin({}));
  return Array.from({ length: count }, (_, i) => ({ kind: 'render', skin, slim: false, size: 64, yaw: i * 10, pitch: 10, shadow: true, outer: true, bg: null }));
}

async function startFarm(t: ExecutionContext, browsers: number): Promise<RenderFarm> {
  const warnings: string[] = [];
  const farm = await RenderFarm.create({ workers: 2, browsers, gpu: 'off', batchSize: 1, jobTimeoutMs: 20_000 }, createLogger('warn', {}, (line) => warnings.push(line)));
  t.teardown(async () => {
    if (!t.passed) t.log(warnings.join(''));
    await farm.close();
  });
  return farm;
}

/** Checks every process of the farm's browsers: pipe only on the command line, no TCP listener, no DevToolsActivePort. */
function assertPipeOnly(t: ExecutionContext, farm: RenderFarm, browsers: number): void {
  const pids = farm.browserPids();
  t.is(pids.length, browsers);
  for (const pid of pids) {
    const cmd = readProc(pid)!.cmd;
    t.true(cmd.includes('--remote-debugging-pipe'), cmd);
    t.false(cmd.includes('--remote-debugging-port'), cmd);
    const userDataDir = /--user-data-dir=(\S+)/.exec(cmd)![1];
    t.false(existsSync(path.join(userDataDir, 'DevToolsActivePort')), 'Chromium wrote no DevTools port for clients to find');
    const tree = [readProc(pid)!, ...descendants(pid)];
    t.true(tree.some((p) => p.cmd.includes('--type=renderer')), 'the pages are in the tree');
    for (const p of tree) t.deepEqual(tcpListeners(p.pid), [], `${p.pid} ${p.cmd.slice(0, 100)} listens on TCP`);
  }
}

test.serial('the way listening sockets are found finds one', async (t) => {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as net.AddressInfo).port;
  t.true(tcpListeners(process.pid).some((address) => address.endsWith(`:${port.toString(16).toUpperCase().padStart(4, '0')}`)));
});

test.serial('a browser per page: no Chromium process listens on a DevTools port, and the farm renders', async (t) => {
  const farm = await startFarm(t, 2);
  t.true((await Promise.all((await jobs(4)).map((job) => farm.render(job)))).every(isPng));
  assertPipeOnly(t, farm, 2);
  t.like(farm.stats(), { pagesAlive: 2, completed: 4, failed: 0 });
});

test.serial('two pages in one browser: no DevTools port, the farm renders, and a killed browser is replaced the same way', async (t) => {
  const farm = await startFarm(t, 1);
  const work = await jobs(4);
  t.true((await Promise.all(work.map((job) => farm.render(job)))).every(isPng));
  assertPipeOnly(t, farm, 1);

  const [dead] = farm.browserPids();
  process.kill(dead, 'SIGKILL');
  t.true((await Promise.all(work.map((job) => farm.render(job)))).every(isPng));
  t.like(farm.stats(), { browserRestarts: 1, pagesAlive: 2, completed: 8, failed: 0 });
  t.not(farm.browserPids()[0], dead);
  assertPipeOnly(t, farm, 1);
});
