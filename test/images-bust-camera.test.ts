// Issue #41 through HTTP with the real render farm: busts (head and upper body, no legs), `fov`
// (a perspective camera, the figure framed alike), the isometric default view of render and cube,
// and `model` drawing a player's skin on the other model.
import test from 'ava';
import { faceColor } from '../scripts/fake-upstream/skin-art.ts';
import { FACE_NAMES, type PartName } from '../shared/skin-layout.ts';
import { colorBox, decodePng, opaqueBox, saveArtifact, solidCount, type Picture } from './helpers/png.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins({ RENDER_WORKERS: '2' });
});
test.after.always(async () => {
  await h?.stop();
});

async function fetchOk(pathname: string, init?: RequestInit) {
  const r = await h.get(pathname, init);
  if (r.status !== 200) throw new Error(`${pathname}: ${r.status} ${r.text.slice(0, 200)}`);
  return r;
}

async function image(pathname: string, name: string): Promise<{ picture: Picture; etag: string | null }> {
  const r = await fetchOk(pathname);
  saveArtifact('images-bust-camera', name, r.bytes);
  return { picture: await decodePng(r.bytes), etag: r.headers.get('etag') };
}

// ClassicSteve wears the test pattern: every face of every part its own colour (skin-art.ts).
const inner = (part: PartName, face: (typeof FACE_NAMES)[number]) => faceColor(part, 'inner', face);
/** Pixels (whole blocks, not edge mixes) of any face of the legs, either layer. */
const legPixels = (p: Picture) => (['leftLeg', 'rightLeg'] as const).reduce((sum, part) => sum + FACE_NAMES.reduce((n, face) => n + solidCount(p, faceColor(part, 'inner', face)) + solidCount(p, faceColor(part, 'outer', face)), 0), 0);
const width = (p: Picture, colour: ReturnType<typeof faceColor>) => {
  const box = colorBox(p, colour);
  return box ? box.x1 - box.x0 : 0;
};

test('a bust: the head above the torso, arms beside it, no legs; every format, ETag and 304, in the record', async (t) => {
  const { picture, etag } = await image('/v1/bust/ClassicSteve/128?outer=0', 'bust');
  const head = colorBox(picture, inner('head', 'front'))!;
  const torso = colorBox(picture, inner('body', 'front'))!;
  t.truthy(head && torso);
  t.true(head.y1 <= torso.y0 + 1, 'the head above the torso');
  t.true(solidCount(picture, inner('rightArm', 'front')) > 0 && solidCount(picture, inner('leftArm', 'front')) > 0, 'both arms');
  t.is(legPixels(picture), 0, 'no leg in the frame');
  // The torso fills much of the frame: a bust is framed closer than the whole figure.
  const render = await image('/v1/render/ClassicSteve/128?outer=0&yaw=0&pitch=0', 'bust-render');
  t.true(legPixels(render.picture) > 0, 'the render of the same player shows its legs');
  t.true(width(picture, inner('body', 'front')) > width(render.picture, inner('body', 'front')) * 1.3);
  // With the outer layer, turned and from below, still no leg.
  for (const query of ['', '?yaw=-40&pitch=-30', '?pose=walking&yaw=30']) t.is(legPixels((await image(`/v1/bust/ClassicSteve/128${query}`, `bust${query}`)).picture), 0, query);
  // From below, the body's bottom shows where no leg hides it.
  t.true(solidCount((await image('/v1/bust/ClassicSteve/128?outer=0&pitch=-40', 'bust-below')).picture, inner('body', 'bottom')) > 20);

  t.is((await h.get('/v1/bust/ClassicSteve/128?outer=0', { headers: { 'if-none-match': etag! } })).status, 304);
  const webp = await fetchOk('/v1/bust/ClassicSteve.webp?size=64');
  t.is(webp.headers.get('content-type'), 'image/webp');
  t.is((await fetchOk('/v1/bust/ClassicSteve?size=64&format=avif')).headers.get('content-type'), 'image/avif');
  t.is((await h.get('/v1/bust/ClassicSteve/64?shape=circle')).status, 200, 'options of other kinds are accepted');
  t.is((await h.get('/v1/bust/ClassicSteve/513')).status, 400);

  const record = (await fetchOk('/v1/player/ClassicSteve')).json.data;
  t.regex(record.images.bust.url, /\/v1\/bust\/[0-9a-f]{32}\/256$/);
  t.regex(record.images.bust.sizeable, /\/v1\/bust\/[0-9a-f]{32}\/\{size\}$/);
  t.is((await h.get(new URL(record.images.bust.url).pathname)).status, 200);
});

test('fov: a perspective view framed as the orthographic one; 0 keeps the orthographic image and its ETag', async (t) => {
  // From above, the head is nearer the camera than the feet: in perspective it is drawn larger
  // against the legs than the 8:4 texels of the orthographic view.
  const ratio = (p: Picture) => width(p, inner('head', 'top')) / width(p, inner('rightLeg', 'front'));
  const flat = await image('/v1/render/ClassicSteve/256?outer=0&shadow=0&yaw=0&pitch=50', 'fov0');
  const deep = await image('/v1/render/ClassicSteve/256?outer=0&shadow=0&yaw=0&pitch=50&fov=90', 'fov90');
  t.true(Math.abs(ratio(flat.picture) - 2) < 0.3, `orthographic: ${ratio(flat.picture)}`);
  t.true(ratio(deep.picture) > 2.8, `perspective: ${ratio(deep.picture)}`);
  t.not(flat.etag, deep.etag);
  t.is((await fetchOk('/v1/render/ClassicSteve/256?outer=0&shadow=0&yaw=0&pitch=50&fov=0')).headers.get('etag'), flat.etag, 'fov=0 is the image of before');
  // Framed alike: the whole figure on the canvas at every field of view, at the same place.
  for (const fov of [10, 45, 90]) {
    for (const pitch of [-60, 0, 60]) {
      const box = opaqueBox((await image(`/v1/render/ClassicSteve/128?shadow=0&yaw=30&pitch=${pitch}&fov=${fov}`, `fov${fov}-${pitch}`)).picture)!;
      t.true(box.x0 > 0 && box.y0 > 0 && box.x1 < 128 && box.y1 < 128, `fov ${fov} pitch ${pitch}: inside the canvas`);
      t.true(box.y1 - box.y0 > 128 * 0.45, `fov ${fov} pitch ${pitch}: as large as the orthographic view draws it`);
    }
  }
  t.is(legPixels((await image('/v1/bust/ClassicSteve/128?fov=60&pitch=-20', 'bust-fov')).picture), 0, 'a bust in perspective');
  const turntable = (fov: string) => fetchOk(`/v1/turntable/ClassicSteve/32?frames=8${fov}`).then((r) => r.headers.get('etag'));
  t.not(await turntable('&fov=40'), await turntable(''));
  for (const bad of ['5', '91', '-1']) t.is((await h.get(`/v1/render/ClassicSteve/64?fov=${bad}`)).status, 400, `fov=${bad}`);
});

test('isometric by default: the isometric address and the cube show three faces of the head; yaw=0&pitch=0 and the sized render are the front', async (t) => {
  const faces = (p: Picture) => (['front', 'top', 'left', 'right'] as const).map((face) => solidCount(p, inner('head', face)));
  const cube = await image('/v1/cube/ClassicSteve/128?helm=0', 'cube-default');
  const [front, top, left, right] = faces(cube.picture);
  t.true(front > 500 && top > 200 && left > 200, `front, top and the figure's left side: ${[front, top, left]}`);
  t.is(right, 0);
  const square = await image('/v1/cube/ClassicSteve/128?helm=0&yaw=0&pitch=0', 'cube-front');
  t.deepEqual(faces(square.picture).map((n) => n > 0), [true, false, false, false], 'the front alone');
  t.not(square.etag, cube.etag);
  // The render (the record's `isometric` address) too.
  const record = (await fetchOk('/v1/player/ClassicSteve')).json.data;
  const isometric = await image(`${new URL(record.images.isometric).pathname}?outer=0`, 'isometric');
  t.true(faces(isometric.picture).slice(0, 3).every((n) => n > 20), 'the head of the render shows three faces');
  t.true(solidCount(isometric.picture, inner('leftArm', 'left')) > 0, 'and the figure\'s left side');
  // The sized render keeps the spec's table: yaw 0, pitch 0, the front (the record's options describe it).
  const sized = await image(`${new URL(record.images.render.url).pathname}?outer=0`, 'render-sized');
  t.deepEqual(faces(sized.picture).map((n) => n > 0), [true, false, false, false], 'the sized render shows the front alone');
  t.is(record.images.render.options.yaw.default, 0);
  t.is(record.images.render.options.pitch.default, 0);
});

test('model overrides the player\'s model: slim arms 3 texels wide against 4; part of the key only where it draws', async (t) => {
  const arm = (p: Picture) => width(p, inner('rightArm', 'front')) / width(p, inner('head', 'front'));
  const query = 'outer=0&shadow=0&yaw=0&pitch=0';
  const classic = await image(`/v1/render/ClassicSteve/256?${query}`, 'model-classic');
  const slim = await image(`/v1/render/ClassicSteve/256?${query}&model=slim`, 'model-slim');
  t.true(Math.abs(arm(classic.picture) - 4 / 8) < 0.05, `classic: ${arm(classic.picture)}`);
  t.true(Math.abs(arm(slim.picture) - 3 / 8) < 0.05, `slim: ${arm(slim.picture)}`);
  t.not(slim.etag, classic.etag);
  t.is((await fetchOk(`/v1/render/ClassicSteve/256?${query}&model=classic`)).headers.get('etag'), classic.etag, 'its own model: the same image');
  // And the other way round: a slim player on the classic model (its arm texture is 3 texels wide,
  // so the 4th column shows the texels next to it: compared by tag, not by colour).
  const alex = (model: string) => fetchOk(`/v1/render/SlimAlex/64${model}`).then((r) => r.headers.get('etag'));
  t.is(await alex('?model=slim'), await alex(''));
  t.not(await alex('?model=classic'), await alex(''));
  for (const kind of ['body', 'bust']) {
    const own = await image(`/v1/${kind}/ClassicSteve/128?outer=0`, `${kind}-classic`);
    const other = await image(`/v1/${kind}/ClassicSteve/128?outer=0&model=slim`, `${kind}-slim`);
    t.true(width(other.picture, inner('rightArm', 'front')) < width(own.picture, inner('rightArm', 'front')), `${kind}: narrower arms`);
  }
  const turntable = (model: string) => fetchOk(`/v1/turntable/ClassicSteve/32?frames=8${model}`).then((r) => r.headers.get('etag'));
  t.not(await turntable('&model=slim'), await turntable(''));
  // A head alone is the same on either model: one image, one ETag.
  for (const kind of ['avatar', 'head', 'cube']) {
    const etag = (model: string) => fetchOk(`/v1/${kind}/ClassicSteve/64${model}`).then((r) => r.headers.get('etag'));
    t.is(await etag('?model=slim'), await etag(''), kind);
  }
  t.is((await h.get('/v1/render/ClassicSteve/64?model=wide')).status, 400);
});
