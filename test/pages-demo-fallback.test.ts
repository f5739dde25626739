// `npm start` without network: the landing page's example images of DEMO_PLAYER are drawn with
// a built-in skin (never cached) while the JSON endpoints, and images of any other player, still
// answer the upstream failure.
import test from 'ava';
import { decodePng } from './helpers/png.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins({ DEMO_PLAYER: 'Knight', RENDER_WORKERS: '1', UPSTREAM_RETRIES: '0' });
  // Both upstreams answer 500 before anything was looked up (nothing cached to fall back on).
  await h.fake.control({ down: { official: true, external: true } });
});
test.after.always(async () => {
  await h?.stop();
});

test('the landing page example loads from a built-in skin when the upstreams fail', async (t) => {
  const landing = await h.get('/');
  const sources = [...landing.text.matchAll(/<img id="example-\w+" src="([^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, '&'));
  t.is(sources.length, 2);
  for (const src of sources) {
    const r = await h.get(src);
    t.is(r.status, 200, src);
    t.is(r.headers.get('content-type'), 'image/png', src);
    t.is(r.headers.get('cache-control'), 'no-store', `${src}: the stand-in is not kept`);
    t.is(r.headers.get('x-demo-fallback'), 'upstream_error', src);
    const picture = await decodePng(r.bytes);
    t.true(picture.data.some((v, i) => i % 4 === 3 && v === 255), `${src}: a figure is drawn`);
  }
});

test('only the demo player\'s images fall back; JSON and other players answer the failure', async (t) => {
  const record = await h.get('/v1/player/Knight');
  t.is(record.status, 502);
  t.is(record.json.code, 'upstream_error');
  const other = await h.get('/v1/avatar/Robot/64');
  t.is(other.status, 502);
  t.is(other.json.code, 'upstream_error');
  t.is((await h.get('/v1/skin/Knight')).status, 502, 'the raw skin is not invented');
});
