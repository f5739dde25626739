// The cape as a picture (GET /v1/cape/{name}/{size}: its front face, nearest neighbour) and the
// processed skin (GET /v1/skin/{name}?processed=1: the skin as the renderer draws it), both drawn
// in-process: no render farm runs here. Pixels are read with sharp and compared with the raw
// textures the same service serves.
import test from 'ava';
import { decodePng, pixel, type Picture } from './helpers/png.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins({ RENDER_WORKERS: '0' });
});
test.after.always(async () => {
  await h?.stop();
});

const image = async (path: string): Promise<Picture> => {
  const r = await h.get(path);
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text.slice(0, 200)}`);
  return decodePng(r.bytes);
};

/** Each pixel of `cape` is the texel of the raw texture's front face under it (10x16 at (1, 1), times k; a legacy 22x17 cape at 1). */
function frontFaceMismatches(cape: Picture, raw: Picture): string[] {
  const k = Math.max(1, raw.width / 64);
  const wrong: string[] = [];
  for (let y = 0; y < cape.height; y += 1) {
    for (let x = 0; x < cape.width; x += 1) {
      const tx = k + Math.floor((x * 10 * k) / cape.width);
      const ty = k + Math.floor((y * 16 * k) / cape.height);
      if (pixel(cape, x, y).join() !== pixel(raw, tx, ty).join()) wrong.push(`(${x},${y}) ${pixel(cape, x, y)} != texel (${tx},${ty}) ${pixel(raw, tx, ty)}`);
    }
  }
  return wrong;
}

for (const [name, size] of [['Knight', 64], ['Ranger', 50], ['CapeWearer', 128], ['SlimAlex', 16]] as const) {
  test(`the cape image of ${name} at ${size} px is its front face's texels`, async (t) => {
    const raw = await image(`/v1/cape/${name}`);
    const cape = await image(`/v1/cape/${name}/${size}`);
    t.is(cape.height, size);
    t.is(cape.width, Math.round((size * 10) / 16));
    t.deepEqual(frontFaceMismatches(cape, raw).slice(0, 5), []);
    // Not one flat colour: the face's pattern is there.
    t.true(new Set(Array.from({ length: cape.width * cape.height }, (_, i) => pixel(cape, i % cape.width, Math.floor(i / cape.width)).join())).size > 1);
  });
}

test('the cape image comes in every format with its own ETag, a 304, and the image headers', async (t) => {
  const png = await h.get('/v1/cape/Knight/64');
  t.is(png.headers.get('content-type'), 'image/png');
  t.regex(png.headers.get('cache-control') ?? '', /^public, max-age=\d+, immutable$/);
  const etag = png.headers.get('etag')!;
  const raw = await h.get('/v1/cape/Knight');
  t.not(raw.headers.get('etag'), etag, 'the picture is not the raw texture');
  t.is((await h.get('/v1/cape/Knight/64', { headers: { 'if-none-match': etag } })).status, 304);
  const pixels = (await decodePng(png.bytes)).data;
  for (const [path, type] of [['/v1/cape/Knight/64.webp', 'image/webp'], ['/v1/cape/Knight/64?format=avif', 'image/avif'], ['/v1/cape/Knight/64.WEBP', 'image/webp']]) {
    const r = await h.get(path);
    t.is(r.status, 200, path);
    t.is(r.headers.get('content-type'), type, path);
    t.not(r.headers.get('etag'), etag, path);
    t.true((await decodePng(r.bytes)).data.equals(pixels), `${path} has the PNG's pixels`);
  }
  const second = await h.get('/v1/cape/Knight/64');
  t.is(second.headers.get('x-cache'), 'HIT');
  t.is((await h.get('/v1/cape/Knight/64.webp?format=avif')).status, 400);
});

test('a player without a cape has no cape image; bad sizes are refused', async (t) => {
  const none = await h.get('/v1/cape/ClassicSteve/64');
  t.is(none.status, 404);
  t.is(none.json.code, 'no_texture');
  t.is(none.headers.get('etag'), null);
  t.is((await h.get('/v1/cape/Knight/4')).status, 400);
  t.is((await h.get('/v1/cape/Knight/513')).status, 400);
  t.is((await h.get('/v1/cape/Knight/64.gif')).status, 400);
});

/** The raw texel at (x, y), or null outside a legacy skin's 32 rows. */
const rawAt = (raw: Picture, x: number, y: number) => (y < raw.height ? pixel(raw, x, y) : null);

test('a processed legacy skin is 64x64 with the left limbs mirrored from the right ones and its base layer opaque', async (t) => {
  const raw = await image('/v1/skin/Miner');
  t.is(raw.width, 64);
  t.is(raw.height, 32, 'Miner is a legacy skin');
  const processed = await image('/v1/skin/Miner?processed=1');
  t.is(processed.width, 64);
  t.is(processed.height, 64);
  // Fronts of the limbs: the left leg (20,52) is the right leg (4,20) mirrored, the left arm (36,52) the right arm (44,20).
  const mirrored: string[] = [];
  for (const [sx, sy, dx, dy] of [[4, 20, 20, 52], [44, 20, 36, 52]]) {
    for (let y = 0; y < 12; y += 1) {
      for (let x = 0; x < 4; x += 1) {
        const want = pixel(raw, sx + 3 - x, sy + y);
        const got = pixel(processed, dx + x, dy + y);
        if (got.slice(0, 3).join() !== want.slice(0, 3).join() || got[3] !== 255) mirrored.push(`(${dx + x},${dy + y}) ${got} != ${want}`);
      }
    }
  }
  t.deepEqual(mirrored.slice(0, 5), []);
  // Base layer (head, body, limbs: rows 0-32 left half and 16-32, the new limbs at 16-48 x 48-64): opaque everywhere.
  let filled = 0;
  const holes: string[] = [];
  const base = [[0, 0, 32, 16], [0, 16, 64, 32], [16, 48, 48, 64]];
  for (const [x0, y0, x1, y1] of base) {
    for (let y = y0; y < y1; y += 1) {
      for (let x = x0; x < x1; x += 1) {
        if (pixel(processed, x, y)[3] !== 255) holes.push(`(${x},${y})`);
        else if (rawAt(raw, x, y)?.[3] === 0) filled += 1;
      }
    }
  }
  t.deepEqual(holes.slice(0, 5), []);
  t.true(filled > 0, 'the raw skin has transparent texels in its base layer, the processed one none');
});

test('a processed skin has its own ETag and cache entry, every format and a download name; HD skins keep their size', async (t) => {
  const raw = await h.get('/v1/skin/Miner');
  const processed = await h.get('/v1/skin/Miner?processed=1');
  t.is(processed.headers.get('content-type'), 'image/png');
  t.not(processed.headers.get('etag'), raw.headers.get('etag'));
  t.false(processed.bytes.equals(raw.bytes));
  t.is((await h.get('/v1/skin/Miner?processed=1', { headers: { 'if-none-match': processed.headers.get('etag')! } })).status, 304);
  t.is((await h.get('/v1/skin/Miner?processed=1')).headers.get('x-cache'), 'HIT');
  const pixels = (await decodePng(processed.bytes)).data;
  for (const path of ['/v1/skin/Miner.webp?processed=1', '/v1/skin/Miner?processed=1&format=avif']) {
    const r = await h.get(path);
    t.is(r.status, 200, path);
    t.true((await decodePng(r.bytes)).data.equals(pixels), path);
  }
  const download = await h.get('/v1/skin/Miner?processed=1&download=1&format=webp');
  t.regex(download.headers.get('content-disposition') ?? '', /attachment; filename="Miner-skin-processed.webp"/);
  const hd = await image('/v1/skin/HdPlayer?processed=1');
  t.is(hd.width, 128);
  t.is(hd.height, 128);
  // A modern skin's base layer was opaque already: processing changes none of its texels there.
  const modern = await image('/v1/skin/ClassicSteve');
  const modernProcessed = await image('/v1/skin/ClassicSteve?processed=1');
  t.deepEqual([pixel(modernProcessed, 9, 9), pixel(modernProcessed, 20, 25)], [pixel(modern, 9, 9), pixel(modern, 20, 25)]);
});

test('the raw skin stays the upstream PNG: another format needs processed=1; no skin is no_texture either way', async (t) => {
  const raw = await h.get('/v1/skin/Miner');
  const named = await h.get('/v1/skin/Miner.png');
  t.is(named.status, 200);
  t.true(named.bytes.equals(raw.bytes));
  for (const path of ['/v1/skin/Miner?format=webp', '/v1/skin/Miner.avif']) {
    const r = await h.get(path);
    t.is(r.status, 400, path);
    t.is(r.json.code, 'bad_request', path);
  }
  for (const path of ['/v1/skin/NoSkin', '/v1/skin/NoSkin?processed=1']) {
    const r = await h.get(path);
    t.is(r.status, 404, path);
    t.is(r.json.code, 'no_texture', path);
  }
});
