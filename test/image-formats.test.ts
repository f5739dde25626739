// Image formats (issue #31): every image in PNG, WebP or AVIF, named by `format=` or an extension,
// by Accept only where the operator turns it on. WebP and AVIF are lossless: decoded, each equals
// the PNG's pixels byte for byte, alpha included. Each format has its own ETag and cache entry,
// on the Koa route and on the hot path in front of it (api/skins/hot-images.ts).
import test from 'ava';
import sharp from 'sharp';
import { encodeImage } from '../api/skins/image-format.ts';
import { drawSkin } from '../scripts/fake-upstream/skin-art.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let plain: SkinsHarness;
let negotiating: SkinsHarness;
test.before(async () => {
  [plain, negotiating] = await Promise.all([
    startSkins({ RENDER_WORKERS: '1' }),
    startSkins({ RENDER_WORKERS: '1', IMAGE_FORMAT_FROM_ACCEPT: 'true' }),
  ]);
});
test.after.always(async () => {
  await Promise.all([plain?.stop(), negotiating?.stop()]);
});

const raw = async (image: Buffer) => sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
const isWebp = (b: Buffer) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP';
const isAvif = (b: Buffer) => b.subarray(4, 12).toString('latin1') === 'ftypavif';
const isPng = (b: Buffer) => b.subarray(1, 4).toString('latin1') === 'PNG';
const accept = (value: string, more: Record<string, string> = {}) => ({ headers: { accept: value, ...more } });

// Small sizes: the pixels are what is compared, and a 64 px render is cheap on a shared machine.
const KINDS = ['/v1/avatar/Knight/64?shape=circle', '/v1/head/Knight/64?yaw=30', '/v1/body/Knight/32', '/v1/render/Knight/64?yaw=150&pose=running', '/v1/cube/Ranger/64'];

for (const path of KINDS) {
  test(`${path.split('/')[2]}: WebP and AVIF decode to the PNG's pixels, alpha included`, async (t) => {
    const png = await plain.get(path);
    t.is(png.status, 200);
    t.is(png.headers.get('content-type'), 'image/png');
    const pixels = await raw(png.bytes);
    // A picture with transparency: the alpha channel is part of what must come back.
    t.true(pixels.data.some((v, i) => i % 4 === 3 && v === 0));
    for (const [format, magic] of [['webp', isWebp], ['avif', isAvif]] as const) {
      const r = await plain.get(`${path}${path.includes('?') ? '&' : '?'}format=${format}`);
      t.is(r.status, 200, r.text.slice(0, 200));
      t.is(r.headers.get('content-type'), `image/${format}`);
      t.true(magic(r.bytes), format);
      t.not(r.headers.get('etag'), png.headers.get('etag'));
      const decoded = await raw(r.bytes);
      t.deepEqual(decoded.info.width, pixels.info.width);
      t.deepEqual(decoded.info.height, pixels.info.height);
      t.true(decoded.data.equals(pixels.data), `${format} pixels differ from the PNG's`);
    }
  });
}

test('an extension on the last segment is the same request as format=', async (t) => {
  const pairs = [
    ['/v1/render/Knight/64.webp', '/v1/render/Knight/64?format=webp'],
    ['/v1/render/Knight/64.AVIF', '/v1/render/Knight/64?format=avif'],
    ['/v1/avatar/Knight.webp?size=64', '/v1/avatar/Knight?size=64&format=webp'],
    ['/v1/avatar/Knight.png', '/v1/avatar/Knight'],
    ['/v1/avatar/Knight.webp?format=webp', '/v1/avatar/Knight?format=webp'],
    ['/v1/avatar/Knight/64.webp', '/v1/avatar/Knight/64?format=webp'],
  ];
  for (const [withExtension, withParam] of pairs) {
    const a = await plain.get(withExtension);
    const b = await plain.get(withParam);
    t.is(a.status, 200, `${withExtension}: ${a.text.slice(0, 200)}`);
    t.is(a.headers.get('content-type'), b.headers.get('content-type'), withExtension);
    t.is(a.headers.get('etag'), b.headers.get('etag'), withExtension);
    t.true(a.bytes.equals(b.bytes), withExtension);
  }
  const uuid = (await plain.get('/v1/uuid/Knight')).json.data.id as string;
  const dashed = `${uuid.slice(0, 8)}-${uuid.slice(8, 12)}-${uuid.slice(12, 16)}-${uuid.slice(16, 20)}-${uuid.slice(20)}`;
  // A UUID (dashes and all) takes an extension as a name does.
  const byUuid = await plain.get(`/v1/avatar/${dashed}.webp?size=64`);
  t.is(byUuid.headers.get('content-type'), 'image/webp');
  t.is(byUuid.headers.get('etag'), (await plain.get('/v1/avatar/Knight/64.webp')).headers.get('etag'));
});

test('a format named twice, differently, or an unknown one, is refused with the envelope', async (t) => {
  // The first of each pair warms its image, so the second asks the hot path too.
  for (const path of ['/v1/render/Knight/64.webp?format=avif', '/v1/avatar/Knight.png?format=webp', '/v1/avatar/Knight/64.avif?format=png', '/v1/avatar/Knight/64?format=gif', '/v1/avatar/Knight/64?format=WEBP']) {
    for (let i = 0; i < 2; i += 1) {
      const r = await plain.get(path);
      t.is(r.status, 400, path);
      t.is(r.json.code, 'bad_request', path);
      t.false(r.json.success);
    }
  }
  // An unknown extension is part of the name (no name has a dot) or of the size, as before.
  t.is((await plain.get('/v1/avatar/Knight.gif')).json.code, 'invalid_name');
  t.is((await plain.get('/v1/avatar/Knight/64.gif')).json.code, 'bad_request');
  t.is((await plain.get('/v1/render/Knight.webp/64')).json.code, 'invalid_name');
});

test('Accept chooses only where the operator turns it on (IMAGE_FORMAT_FROM_ACCEPT), and then the answer varies by it', async (t) => {
  for (let i = 0; i < 2; i += 1) {
    // Off (the default): a browser's Accept gets the PNG, and nothing varies. Twice: the second answer comes from the hot path.
    const r = await plain.get('/v1/avatar/Robot/64', accept('image/avif,image/webp,*/*'));
    t.is(r.headers.get('content-type'), 'image/png');
    t.true(isPng(r.bytes));
    t.is(r.headers.get('vary'), null);
  }
  const cases: Array<[string, string]> = [
    ['image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8', 'webp'],
    ['image/avif', 'avif'],
    // AVIF only when preferred or alone: at equal q PNG is smaller for small images, and cheaper.
    ['image/avif,*/*', 'png'],
    ['image/webp;q=0.5, image/avif;q=0.9', 'avif'],
    ['image/png, image/webp;q=0.5', 'png'],
    ['image/webp;q=0, */*', 'png'],
    ['*/*', 'png'],
    ['', 'png'],
  ];
  for (let i = 0; i < 2; i += 1) {
    for (const [header, format] of cases) {
      const r = await negotiating.get('/v1/avatar/Robot/64', header ? accept(header) : {});
      t.is(r.headers.get('content-type'), `image/${format}`, header);
      t.is(r.headers.get('vary'), 'Accept', header);
      if (format === 'webp') t.true(isWebp(r.bytes));
    }
  }
  // Named in the URL, the format does not depend on Accept: nothing varies.
  for (const path of ['/v1/avatar/Robot/64?format=png', '/v1/avatar/Robot/64.avif']) {
    const r = await negotiating.get(path, accept('image/webp'));
    t.is(r.headers.get('content-type'), path.endsWith('avif') ? 'image/avif' : 'image/png');
    t.is(r.headers.get('vary'), null, path);
  }
});

test('the hot path never answers one format with another\'s bytes', async (t) => {
  const path = '/v1/render/Astronaut/64';
  // PNG first: its render is cached, its URL parsed and its tag kept by the hot path.
  for (let i = 0; i < 2; i += 1) t.is((await negotiating.get(path, accept('*/*'))).headers.get('content-type'), 'image/png');
  for (const [header, format, magic] of [['image/webp', 'webp', isWebp], ['image/avif', 'avif', isAvif], ['*/*', 'png', isPng]] as const) {
    for (let i = 0; i < 2; i += 1) {
      const hot = await negotiating.get(path, accept(header));
      t.is(hot.headers.get('content-type'), `image/${format}`);
      t.true(magic(hot.bytes), `${format}, request ${i}`);
      if (i === 1) {
        // The reference: a percent-encoded name always goes to Koa.
        const koa = await negotiating.get(path.replace('Astronaut', 'Astr%6Fnaut'), accept(header));
        t.is(hot.headers.get('x-cache'), 'HIT');
        t.is(hot.headers.get('etag'), koa.headers.get('etag'));
        t.is(hot.headers.get('vary'), koa.headers.get('vary'));
        t.true(hot.bytes.equals(koa.bytes));
      }
    }
  }
  // And with the format in the URL on a service that ignores Accept.
  for (const [suffix, magic] of [['', isPng], ['.webp', isWebp], ['.avif', isAvif], ['?format=webp', isWebp]] as const) {
    for (let i = 0; i < 2; i += 1) t.true(magic((await plain.get(`${path}${suffix}`)).bytes), `${suffix} ${i}`);
  }
});

test('each format has its own ETag, and a 304 only for its own', async (t) => {
  const path = '/v1/body/Ranger/32';
  const tags = new Map<string, string>();
  for (const format of ['png', 'webp', 'avif']) {
    const r = await plain.get(`${path}?format=${format}`);
    tags.set(format, r.headers.get('etag')!);
  }
  t.is(new Set(tags.values()).size, 3);
  // PNG named or not is one image.
  t.is((await plain.get(path)).headers.get('etag'), tags.get('png')!);
  for (let i = 0; i < 2; i += 1) {
    for (const [format, etag] of tags) {
      const same = await plain.get(`${path}.${format}`, { headers: { 'if-none-match': etag } });
      t.is(same.status, 304, format);
      t.is(same.headers.get('etag'), etag);
      const other = [...tags].find(([f]) => f !== format)![1];
      const changed = await plain.get(`${path}.${format}`, { headers: { 'if-none-match': other } });
      t.is(changed.status, 200, format);
      t.is(changed.headers.get('content-type'), `image/${format}`);
    }
  }
  // With Accept choosing, a 304 says Vary too.
  const webp = await negotiating.get(path, accept('image/webp'));
  const revalidated = await negotiating.get(path, accept('image/webp', { 'if-none-match': webp.headers.get('etag')! }));
  t.is(revalidated.status, 304);
  t.is(revalidated.headers.get('vary'), 'Accept');
  t.is((await negotiating.get(path, accept('image/avif', { 'if-none-match': webp.headers.get('etag')! }))).status, 200);
});

test('HEAD answers the format\'s type and length without a body', async (t) => {
  const get = await plain.get('/v1/cube/Ranger/64.webp');
  const head = await plain.get('/v1/cube/Ranger/64.webp', { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(head.headers.get('content-type'), 'image/webp');
  t.is(head.headers.get('content-length'), String(get.bytes.length));
  t.is(head.bytes.length, 0);
});

test('an upload renders in the format its form, query or extension names', async (t) => {
  const skin = await drawSkin({ seed: 7 });
  const upload = async (path: string, fields: Record<string, string> = {}) => {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(skin)], { type: 'image/png' }), 'skin.png');
    for (const [name, value] of Object.entries(fields)) form.set(name, value);
    return plain.get(path, { method: 'POST', body: form });
  };
  const png = await upload('/v1/render', { size: '64', yaw: '30' });
  t.is(png.headers.get('content-type'), 'image/png');
  const pixels = (await raw(png.bytes)).data;
  for (const [path, fields, format] of [
    ['/v1/render', { size: '64', yaw: '30', format: 'webp' }, 'webp'],
    ['/v1/render?format=avif', { size: '64', yaw: '30' }, 'avif'],
    ['/v1/render/64.webp', { yaw: '30' }, 'webp'],
  ] as const) {
    const r = await upload(path, fields);
    t.is(r.status, 200, r.text.slice(0, 200));
    t.is(r.headers.get('content-type'), `image/${format}`, path);
    t.true((await raw(r.bytes)).data.equals(pixels), path);
    t.not(r.headers.get('etag'), png.headers.get('etag'));
  }
  const conflict = await upload('/v1/render/64.webp', { format: 'avif' });
  t.is(conflict.status, 400);
  t.is(conflict.json.code, 'bad_request');
});

test('encodes wait their turn, two at a time; past 256 waiting the answer is overloaded', async (t) => {
  const png = await sharp({ create: { width: 8, height: 8, channels: 4, background: { r: 10, g: 20, b: 30, alpha: 0.5 } } }).png().toBuffer();
  // Called in one turn of the loop by two clients (one encode of each runs at a time): two start, 256 wait, the rest are refused at once.
  const outcomes = await Promise.allSettled(Array.from({ length: 300 }, (_, i) => encodeImage(png, 'webp', `client-${i % 2}`)));
  const refused = outcomes.filter((o) => o.status === 'rejected');
  t.is(refused.length, 42);
  for (const o of refused) t.is((o.reason as { code?: string }).code, 'overloaded');
  const done = outcomes.filter((o) => o.status === 'fulfilled').map((o) => o.value);
  t.is(done.length, 258);
  const pixels = (await raw(png)).data;
  t.true((await raw(done.at(-1)!)).data.equals(pixels));
  // The queue empties: a later encode starts at once.
  t.true(isWebp(await encodeImage(png, 'webp', 'client-0')));
});
