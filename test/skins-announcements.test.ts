// fresh=1 on the announcements is bounded: one upstream refetch per 10 s per instance, whatever
// the clients send, and a failed refetch still answers with the copy we have.
import test from 'ava';
import { startSkins } from './helpers/skins.ts';

test('fresh=1 refetches at most once per window; the others get that copy', async (t) => {
  const h = await startSkins();
  t.teardown(() => h.stop());
  t.is((await h.get('/v1/external/announcements')).status, 200);
  h.fake.resetCalls();
  const answers = await Promise.all(Array.from({ length: 10 }, () => h.get('/v1/external/announcements?fresh=1')));
  for (let i = 0; i < 10; i += 1) t.is((await h.get('/v1/external/announcements?fresh=1')).status, 200);
  t.true(answers.every((a) => a.status === 200));
  t.is(h.fake.calls()['external.announcements'] ?? 0, 1, '20 fresh requests, one upstream call');
});

test('a failed fresh refetch answers with the cached copy', async (t) => {
  const h = await startSkins();
  t.teardown(() => h.stop());
  const first = await h.get('/v1/external/announcements');
  t.is(first.status, 200);
  h.fake.control({ down: { external: true } });
  const fresh = await h.get('/v1/external/announcements?fresh=1');
  t.is(fresh.status, 200);
  t.deepEqual(fresh.json.data, first.json.data);
});
