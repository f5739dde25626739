// The ETag of a render of an uploaded skin comes from the uploaded bytes and the options.
import test from 'ava';
import { drawSkin } from '../scripts/fake-upstream/skin-art.ts';
import { startSkins } from './helpers/skins.ts';

test('two uploads never share an ETag; the same bytes and options keep theirs', async (t) => {
  const h = await startSkins({ RENDER_WORKERS: '1' });
  t.teardown(() => h.stop());
  const upload = async (skin: Buffer, yaw: string) => {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(skin)], { type: 'image/png' }), 'skin.png');
    form.set('yaw', yaw);
    const r = await h.get('/v1/render/64', { method: 'POST', body: form });
    t.is(r.status, 200, r.text.slice(0, 200));
    return r.headers.get('etag');
  };
  const a = await drawSkin({ seed: 1 });
  const b = await drawSkin({ seed: 2 });
  const tagA = await upload(a, '30');
  t.truthy(tagA);
  t.is(await upload(a, '30'), tagA);
  t.not(await upload(b, '30'), tagA);
  t.not(await upload(a, '31'), tagA);
});
