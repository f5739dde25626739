// Issue #41 through HTTP with the real render farm: the new poses (each its own silhouette at
// more than one yaw; the lying ones horizontal, inside the picture, over their shadow), per-limb
// angles on render, bust, body and turntable (0 is the same image and ETag as none), and grey wings for
// equip=elytra on a player without a cape.
import test from 'ava';
import { POSE_NAMES } from '../shared/skin-layout.ts';
import { decodePng, opaqueBox, pixel, saveArtifact, shadowPixels, type Picture } from './helpers/png.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins({ RENDER_WORKERS: '2' });
});
test.after.always(async () => {
  await h?.stop();
});

const NEW_POSES = ['marching', 'cheering', 'pointing', 'relaxing', 'sleeping', 'dead', 'archer', 'kicking', 'lunging', 'facepalm', 'cowering', 'reading'];
const LYING = ['sleeping', 'dead'];

interface Image { picture: Picture; bytes: Buffer; etag: string | null }

async function image(pathname: string, name: string): Promise<Image> {
  const r = await h.get(pathname);
  if (r.status !== 200) throw new Error(`${pathname}: ${r.status} ${r.text.slice(0, 200)}`);
  saveArtifact('poses-limbs', name, r.bytes);
  return { picture: await decodePng(r.bytes), bytes: r.bytes, etag: r.headers.get('etag') };
}

/** Pixels covered in one picture and not in the other (alpha at least half). */
function silhouetteDifference(a: Picture, b: Picture): number {
  let n = 0;
  for (let i = 3; i < a.data.length; i += 4) if ((a.data[i] >= 128) !== (b.data[i] >= 128)) n += 1;
  return n;
}

/** Pixels of the outermost row and column that are not fully transparent. */
function onBorder(p: Picture): number {
  let n = 0;
  for (let i = 0; i < p.width; i += 1) {
    for (const [x, y] of [[i, 0], [i, p.height - 1], [0, i * p.height / p.width], [p.width - 1, i * p.height / p.width]]) if (pixel(p, x, y)[3] > 0) n += 1;
  }
  return n;
}

const render = (query: string) => `/v1/render/ClassicSteve/128?${query}`;

test('the pose parameter lists every new pose, and the player record its values', async (t) => {
  for (const pose of NEW_POSES) t.true((POSE_NAMES as readonly string[]).includes(pose), pose);
  const record = await h.get('/v1/player/ClassicSteve');
  t.is(record.status, 200);
  const text = record.text;
  for (const pose of NEW_POSES) t.true(text.includes(`"${pose}"`), `the record lists ${pose}`);
  for (const name of ['head_yaw', 'head_pitch', 'arm_left', 'arm_right', 'leg_left', 'leg_right']) t.true(text.includes(`"${name}"`), `the record lists ${name}`);
});

for (const yaw of [0, 120]) {
  test(`each new pose has its own silhouette at yaw ${yaw}, inside the picture`, async (t) => {
    const query = (pose: string) => `yaw=${yaw}&pitch=10&shadow=0&pose=${pose}`;
    const standing = await image(render(query('standing')), `standing-${yaw}`);
    const masks = new Map<string, Picture>([['standing', standing.picture]]);
    for (const pose of NEW_POSES) {
      const { picture } = await image(render(query(pose)), `${pose}-${yaw}`);
      // An arm of the 128 px render is about 13 px wide and 40 long: a moved limb changes hundreds.
      t.true(silhouetteDifference(picture, standing.picture) > 250, `${pose} differs from standing`);
      t.is(onBorder(picture), 0, `${pose}: nothing drawn on the picture's edge`);
      masks.set(pose, picture);
    }
    // And from one another: no new pose is another's twin.
    for (const [a, pa] of masks) for (const [b, pb] of masks) if (a < b) t.true(silhouetteDifference(pa, pb) > 100, `${a} and ${b} differ`);
  });
}

test('lying poses are horizontal, inside the picture, over their shadow, from every side', async (t) => {
  for (const pose of LYING) {
    // Not end-on (yaw 90): seen from above along its length a lying figure is as tall as it is wide.
    for (const [yaw, pitch] of [[0, 20], [60, 15], [-135, 25], [180, 20]]) {
      const { picture } = await image(render(`yaw=${yaw}&pitch=${pitch}&pose=${pose}`), `${pose}-shadow-${yaw}`);
      const box = opaqueBox(picture)!;
      t.true(box.x1 - box.x0 > box.y1 - box.y0, `${pose} at yaw ${yaw}: wider than tall (${box.x1 - box.x0} x ${box.y1 - box.y0})`);
      t.is(onBorder(picture), 0, `${pose} at yaw ${yaw}: inside the picture`);
      t.true(shadowPixels(picture) > 100, `${pose} at yaw ${yaw}: the shadow is there`);
      // The shadow lies on the ground under the figure: none of it above the figure's middle.
      const middle = (box.y0 + box.y1) / 2;
      t.is(shadowPixels(picture, { x0: 0, y0: 0, x1: picture.width, y1: Math.floor(box.y0 + (middle - box.y0) / 2) }), 0, `${pose} at yaw ${yaw}: no shadow above the figure`);
    }
  }
});

test('limb angles turn the head and limbs on render, bust, body and turntable; 0 is no parameter at all', async (t) => {
  const plain = await image(render('yaw=90&pitch=0&shadow=0'), 'limbs-plain');
  const zero = await image(render('yaw=90&pitch=0&shadow=0&arm_left=0&head_yaw=0'), 'limbs-zero');
  t.is(zero.etag, plain.etag);
  t.true(zero.bytes.equals(plain.bytes), 'the same bytes');
  for (const limb of ['arm_left=90', 'arm_right=-45', 'leg_left=60', 'leg_right=-30', 'head_pitch=40', 'head_yaw=45']) {
    const turned = await image(render(`yaw=90&pitch=0&shadow=0&${limb}`), `limbs-${limb}`);
    t.not(turned.etag, plain.etag, limb);
    t.true(silhouetteDifference(turned.picture, plain.picture) > 30, `${limb} changes the silhouette`);
  }
  // Added to the pose's own: waving's raised arm brought back down by its angle.
  const waving = await image(render('yaw=90&pitch=0&shadow=0&pose=waving'), 'limbs-waving');
  const lowered = await image(render('yaw=90&pitch=0&shadow=0&pose=waving&arm_right=30'), 'limbs-waving-arm');
  t.true(silhouetteDifference(waving.picture, lowered.picture) > 30, 'an angle added to a pose');
  // The body view (a flat front) turns limbs in that view: an arm raised sideways shows beside the head.
  const body = await image('/v1/body/ClassicSteve/64', 'limbs-body-plain');
  const body0 = await image('/v1/body/ClassicSteve/64?arm_right=0&leg_left=0', 'limbs-body-zero');
  const raised = await image('/v1/body/ClassicSteve/64?arm_right=180', 'limbs-body-raised');
  t.is(body0.etag, body.etag);
  t.true(body0.bytes.equals(body.bytes));
  t.not(raised.etag, body.etag);
  t.true(silhouetteDifference(raised.picture, body.picture) > 30, 'the raised arm');
  // The bust too, its frame grown to hold an arm raised past it.
  const bust = await image('/v1/bust/ClassicSteve/64', 'limbs-bust-plain');
  t.is((await image('/v1/bust/ClassicSteve/64?arm_left=0', 'limbs-bust-zero')).etag, bust.etag);
  const bustRaised = await image('/v1/bust/ClassicSteve/64?arm_left=180&head_pitch=-30', 'limbs-bust-raised');
  t.not(bustRaised.etag, bust.etag);
  t.is(onBorder(bustRaised.picture), 0, 'the raised arm inside the bust');
  // A turntable takes them as its first frame's still does.
  const spin = (q: string) => h.get(`/v1/turntable/ClassicSteve/32?frames=8${q}`, { headers: { 'x-forwarded-for': '198.51.100.41' } });
  const [spin0, spinZero, spinArm] = [await spin(''), await spin('&arm_left=0'), await spin('&arm_left=90')];
  t.is(spin0.status, 200);
  t.is(spinZero.headers.get('etag'), spin0.headers.get('etag'));
  t.not(spinArm.headers.get('etag'), spin0.headers.get('etag'));
  // A limb swung past every pose's reach (sitting's forward leg swung on up) stays in the picture.
  for (const yaw of [0, 90, -150]) t.is(onBorder((await image(render(`yaw=${yaw}&pitch=20&pose=sitting&leg_left=70&arm_right=-180`), `limbs-far-${yaw}`)).picture), 0, `yaw ${yaw}: inside`);
  // Out of range is refused, as every option's range is.
  t.is((await h.get(render('arm_left=181'))).status, 400);
});

/** Opaque pixels whose channels are equal within a few levels: the grey wings (the test skin has no grey face). */
function grey(p: Picture): number {
  let n = 0;
  for (let i = 0; i < p.data.length; i += 4) {
    const [r, g, b, a] = p.data.subarray(i, i + 4);
    if (a >= 250 && Math.max(r, g, b) - Math.min(r, g, b) <= 3 && r > 40 && r < 230) n += 1;
  }
  return n;
}

test('equip=elytra on a player without a cape draws grey wings behind the body', async (t) => {
  const back = 'yaw=180&pitch=10&shadow=0';
  const bare = await image(render(back), 'no-cape');
  const winged = await image(render(`${back}&equip=elytra`), 'no-cape-elytra');
  t.not(winged.etag, bare.etag);
  t.true(grey(winged.picture) - grey(bare.picture) > 500, `grey wings: ${grey(winged.picture)} grey pixels, ${grey(bare.picture)} without`);
  const body = await image('/v1/body/ClassicSteve/64?view=back', 'no-cape-body');
  const bodyWinged = await image('/v1/body/ClassicSteve/64?view=back&equip=elytra', 'no-cape-body-elytra');
  t.true(grey(bodyWinged.picture) - grey(body.picture) > 100, 'the body view too');
});
