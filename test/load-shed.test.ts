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
  // Block the loop, then let the monitor's late timer tick once.
  const until = Date.now() + 400;
  while (Date.now() < until);
  await new Promise((resolve) => setTimeout(resolve, 0));
  t.true(monitor.lagMs > 50, `lag ${monitor.lagMs}`);
  const error = await t.throwsAsync(() => pass('/v1/render/x'));
  t.is((error as ApiError).code, 'overloaded');
  t.is((error as ApiError).status, 503);
  t.true((error as ApiError).retryAfter! >= 1);
  t.true(await pass('/v1/status'));
});
