// Without TRUST_PROXY a client cannot pick its rate-limit identity with X-Forwarded-For.
import test from 'ava';
import { startSkins } from './helpers/skins.ts';
import { startInOneWindow } from './helpers/rate-window.ts';

test('X-Forwarded-For is ignored unless TRUST_PROXY is set', async (t) => {
  const h = await startSkins();
  t.teardown(() => h.stop());
  // Both requests in one window (a turn of the minute between them failed this once).
  await startInOneWindow(5_000);
  const a = await h.get('/v1/decode?value=e30=', { headers: { 'x-forwarded-for': '203.0.113.1' } });
  const b = await h.get('/v1/decode?value=e30=', { headers: { 'x-forwarded-for': '203.0.113.2' } });
  t.is(Number(b.headers.get('x-ratelimit-remaining')), Number(a.headers.get('x-ratelimit-remaining')) - 1);
  t.true(h.app.logs.some((l) => l.msg === 'request' && l.ip === '127.0.0.1'));
});
