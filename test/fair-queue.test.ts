// The encode queue's fairness (shared/fair-queue.ts), as a plain module: clients take turns, one
// job of a client runs at a time, the waiting bound refuses at once. Jobs end when the test says.
import test from 'ava';
import { FairQueue } from '../shared/fair-queue.ts';

/** A queue whose jobs record their start and end only when `finish(name)` is called. */
function harness(slots: number, maxWaiting: number) {
  const queue = new FairQueue(slots, maxWaiting, () => new Error('full'));
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  const submit = (client: string, name: string) => queue.run(client, () => new Promise<string>((resolve) => {
    started.push(name);
    finishers.set(name, () => resolve(name));
  }));
  /** Ends a running job and lets the queue start the next ones. */
  const finish = async (name: string, job: Promise<unknown>) => {
    finishers.get(name)!();
    await job;
  };
  return { queue, started, submit, finish };
}

test('a freed slot goes to the next client in turn, not to the oldest job', async (t) => {
  const { started, submit, finish } = harness(1, 100);
  const a1 = submit('a', 'a1');
  const [a2, a3] = [submit('a', 'a2'), submit('a', 'a3')];
  const b1 = submit('b', 'b1');
  const c1 = submit('c', 'c1');
  t.deepEqual(started, ['a1']);
  await finish('a1', a1);
  t.deepEqual(started, ['a1', 'b1'], 'b waited for one job of a, not for all of them');
  await finish('b1', b1);
  t.deepEqual(started, ['a1', 'b1', 'c1']);
  await finish('c1', c1);
  await finish('a2', a2);
  await finish('a3', a3);
  t.deepEqual(started, ['a1', 'b1', 'c1', 'a2', 'a3']);
});

test('one job of a client runs at a time, even with a slot free; another client takes that slot', async (t) => {
  const { queue, started, submit, finish } = harness(2, 100);
  const a1 = submit('a', 'a1');
  const a2 = submit('a', 'a2');
  t.deepEqual(started, ['a1']);
  t.like(queue, { running: 1, waiting: 1 });
  const b1 = submit('b', 'b1');
  t.deepEqual(started, ['a1', 'b1']);
  t.like(queue, { running: 2, waiting: 1 });
  await finish('a1', a1);
  t.deepEqual(started, ['a1', 'b1', 'a2']);
  await finish('b1', b1);
  await finish('a2', a2);
  t.like(queue, { running: 0, waiting: 0 });
});

test('past the waiting bound a job is refused at once; a failed job frees its slot', async (t) => {
  const queue = new FairQueue(1, 1, () => new Error('full'));
  let release!: () => void;
  const first = queue.run('a', () => new Promise<void>((resolve) => { release = resolve; }));
  const second = queue.run('b', () => Promise.reject(new Error('broken')));
  await t.throwsAsync(queue.run('c', async () => 'never'), { message: 'full' });
  release();
  await first;
  await t.throwsAsync(second, { message: 'broken' });
  t.like(queue, { running: 0, waiting: 0 });
  t.is(await queue.run('c', async () => 'ran'), 'ran');
});
