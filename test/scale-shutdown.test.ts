// SIGTERM during a burst: in-flight requests finish, new connections are refused, exit code 0.
import test from 'ava';
import { startSkins } from './helpers/skins.ts';

test('graceful shutdown finishes every in-flight request', async (t) => {
  // Generous upstream timeout: only the shutdown may fail these requests, not a loaded machine.
  const h = await startSkins({ UPSTREAM_TIMEOUT_MS: '10000' });
  t.teardown(() => h.stop());
  // Every upstream answer takes 400 ms, so the burst is still in flight when SIGTERM arrives.
  h.fake.control({ latencyMs: 400 });
  const names = Array.from({ length: 40 }, (_, i) => `gen_${9000 + i}`);
  const burst = names.map((name) => h.get(`/v1/player/${name}`));
  // SIGTERM once every request of the burst has reached the upstream: all are in flight.
  const seen = () => {
    const sent = h.fake.requests().map((r) => `${r.path} ${r.body ?? ''}`).join('\n');
    return names.every((name) => sent.includes(name));
  };
  while (!seen()) await new Promise((resolve) => setTimeout(resolve, 5));
  h.app.process.kill('SIGTERM');
  const results = await Promise.all(burst);
  t.deepEqual(results.map((r) => r.status), results.map(() => 200));
  const code = await h.app.stop();
  t.is(code, 0);
  await t.throwsAsync(() => fetch(`${h.base}/v1/status`), undefined, 'no new connections after shutdown');
});
