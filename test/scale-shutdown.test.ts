// SIGTERM during a burst: in-flight requests finish, new connections are refused, exit code 0.
import test from 'ava';
import { startSkins } from './helpers/skins.ts';

test('graceful shutdown finishes every in-flight request', async (t) => {
  // Generous upstream timeout: only the shutdown may fail these requests, not a loaded machine.
  const h = await startSkins({ UPSTREAM_TIMEOUT_MS: '10000' });
  t.teardown(() => h.stop());
  // Every upstream answer takes 400 ms, so the burst is still in flight when SIGTERM arrives.
  h.fake.control({ latencyMs: 400 });
  const burst = Array.from({ length: 40 }, (_, i) => h.get(`/v1/player/gen_${9000 + i}`));
  // SIGTERM once the burst has reached the upstream, i.e. while it is in flight.
  while (h.fake.requests().length === 0) await new Promise((resolve) => setImmediate(resolve));
  h.app.process.kill('SIGTERM');
  const results = await Promise.all(burst);
  t.deepEqual(results.map((r) => r.status), results.map(() => 200));
  const code = await h.app.stop();
  t.is(code, 0);
  await t.throwsAsync(() => fetch(`${h.base}/v1/status`), undefined, 'no new connections after shutdown');
});
