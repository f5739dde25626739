// Load shedding: when the event loop lags past the threshold, requests get 503 at once.
import test from 'ava';
import { LagMonitor } from '../api/http/load-shed.ts';
import { ApiError } from '../shared/errors.ts';

test('a lagging event loop sheds requests with overloaded; status endpoints still answer', async (t) => {
  const monitor = new LagMonitor(100);
  t.teardown(() => monitor.stop());
  const shed = monitor.middleware(50);
  const pass = async (path: string) => {
    let reached = false;
    await shed({ path } as never, async () => { reached = true; });
    return reached;
  };
  t.true(await pass('/v1/render/x'), 'no lag, no shedding');
  // One long pause is not overload: nothing is shed.
  const block = (ms: number) => {
    const until = Date.now() + ms;
    while (Date.now() < until);
  };
  block(400);
  await new Promise((resolve) => setTimeout(resolve, 0));
  t.true(await pass('/v1/render/x'), 'a single pause sheds nothing');
  // A loop that is late on every tick is overloaded.
  for (let i = 0; i < 4; i += 1) {
    block(250);
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  t.true(monitor.lagMs > 50, `lag ${monitor.lagMs}`);
  const error = await t.throwsAsync(() => pass('/v1/render/x'));
  t.is((error as ApiError).code, 'overloaded');
  t.is((error as ApiError).status, 503);
  t.true((error as ApiError).retryAfter! >= 1);
  t.true(await pass('/v1/status'));
});
