// StateLog: a condition that holds for many events is one line when it starts, then one count
// line per interval, and a line when clear() ends it.
import test from 'ava';
import { createLogger } from '../shared/log.ts';
import { StateLog } from '../shared/log-state.ts';

/** A logger whose lines are kept, and a promise for the next one. */
function capture() {
  const lines: Array<Record<string, unknown>> = [];
  let waiting: (() => void) | null = null;
  const log = createLogger('info', {}, (line) => {
    lines.push(JSON.parse(line));
    waiting?.();
  });
  const next = () => new Promise<void>((resolve) => { waiting = resolve; });
  return { log, lines, next };
}

test('the first event is logged at once, the rest as one count per interval', async (t) => {
  const { log, lines, next } = capture();
  const state = new StateLog(log, 'store down', { intervalMs: 20 });
  for (let i = 0; i < 500; i += 1) state.hit({ attempt: i });
  t.is(lines.length, 1);
  t.like(lines[0], { level: 'warn', msg: 'store down', attempt: 0 });
  t.is(lines[0].count, undefined, 'the first line is the change of state');
  // The count's timer is unref'd (it never keeps a process alive): this one keeps the test's.
  const alive = setTimeout(() => {}, 60_000);
  await next();
  clearTimeout(alive);
  t.is(lines.length, 2);
  t.like(lines[1], { msg: 'store down', count: 499, total: 500, attempt: 499 });
});

test('clear() logs the recovery with the events not yet counted, and ends the state', (t) => {
  const { log, lines } = capture();
  const state = new StateLog(log, 'store down', { recovered: 'store back', intervalMs: 60_000 });
  state.clear();
  t.is(lines.length, 0, 'nothing to recover from');
  state.hit();
  state.hit();
  state.hit();
  state.clear({ store: 'redis' });
  t.deepEqual(lines.map((l) => l.msg), ['store down', 'store back']);
  t.like(lines[1], { level: 'info', count: 2, total: 3, store: 'redis' });
  state.hit();
  t.is(lines.length, 3, 'the next event starts the state again');
});
