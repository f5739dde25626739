// The farm heals itself with its default timeouts, whatever its shape: for 1, 2 and 4 pages in one
// or two browsers, a killed GPU process, a killed renderer, a killed browser and an idle trim are
// each followed by the right images, and no job waits for a job timeout. Renders go one at a
// time, as an idle service gets them: the other pages sit idle meanwhile (issue #38: an idle page
// thread froze in Piscina's Atomics.wait, and every page opened beside it in its browser then hung
// until its job timed out, for good).
// Real Chromium; the farms of this file one after another.
import test from 'ava';
import { RenderFarm } from '../renderer/farm.ts';
import type { RenderJob } from '../renderer/jobs.ts';
import { normalizeSkin } from '../renderer/skin-normalize.ts';
import { drawSkin } from '../scripts/fake-upstream/skin-art.ts';
import { createLogger } from '../shared/log.ts';
import { descendants } from './helpers/processes.ts';

let views: RenderJob[];
test.before(async () => {
  const skin = await normalizeSkin(await drawSkin({ seed: 38 }));
  views = [0, 90, 180, 270].map((yaw) => ({ kind: 'render', skin, slim: false, size: 64, yaw, pitch: 15, shadow: true, outer: true, bg: null }));
});

/** The views drawn one after another (each job finds every page idle), as settled results. */
async function oneByOne(farm: RenderFarm): Promise<Array<Buffer | Error>> {
  const out: Array<Buffer | Error> = [];
  for (const view of views) out.push(await farm.render(view).catch((error: Error) => error));
  return out;
}

const SHAPES: Array<[workers: number, browsers: number]> = [[1, 1], [2, 1], [2, 2], [4, 1], [4, 2]];

for (const [workers, browsers] of SHAPES) {
  test.serial(`${workers} page(s) in ${browsers} browser(s), default timeouts: after a killed GPU process, renderer, browser and an idle trim the next renders are right and none times out`, async (t) => {
    const lines: string[] = [];
    const farm = await RenderFarm.create({ workers, browsers, gpu: 'off' }, createLogger('warn', {}, (line) => lines.push(line)));
    t.teardown(() => farm.close());
    const expected = await oneByOne(farm);
    t.true(expected.every(Buffer.isBuffer), 'the first renders');
    const ofType = (type: string) => farm.browserPids().flatMap((pid) => descendants(pid).filter((p) => p.cmd.includes(`--type=${type}`)).map((p) => p.pid));
    const faults: Array<[string, () => unknown]> = [
      ['a killed GPU process', () => ofType('gpu-process').forEach((pid) => process.kill(pid, 'SIGKILL'))],
      ['killed renderers', () => ofType('renderer').forEach((pid) => process.kill(pid, 'SIGKILL'))],
      ['a killed browser', () => process.kill(farm.browserPids()[0], 'SIGKILL')],
      ['an idle trim', () => farm.trim()],
    ];
    for (const [fault, cause] of faults) {
      const started = performance.now();
      await cause();
      const answers = await oneByOne(farm);
      const wrong = answers.flatMap((a, i) => (Buffer.isBuffer(a) && a.equals(expected[i] as Buffer) ? [] : [`view ${i}: ${Buffer.isBuffer(a) ? 'another image' : a.message}`]));
      t.deepEqual(wrong, [], `after ${fault}`);
      t.log(`${fault}: four renders in ${Math.round(performance.now() - started)} ms`);
    }
    t.like(farm.stats(), { failed: 0 });
    t.false(lines.some((line) => /timed out|aborted|Terminating/.test(line)), lines.join(''));
  });
}
