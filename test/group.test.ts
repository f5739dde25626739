// Several players in one picture (GET /v1/group/{size}?names=): each figure is the player's own
// render at the same options, side by side in the order given (real render farm, SwiftShader);
// unknown names are left out and named in X-Group-Missing; the group is charged one render per player.
import test from 'ava';
import { decodePng, type Picture } from './helpers/png.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins({ RENDER_WORKERS: '1' });
});
test.after.always(async () => {
  await h?.stop();
});

const SIZE = 64;
const OPTIONS = 'yaw=20&pitch=10&pose=walking';

async function picture(path: string): Promise<Picture> {
  const r = await h.get(path);
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text.slice(0, 200)}`);
  return decodePng(r.bytes);
}

/** The square of `p` that is figure `i`. */
function band(p: Picture, i: number): Buffer {
  const rows = Array.from({ length: p.height }, (_, y) => p.data.subarray((y * p.width + i * p.height) * 4, (y * p.width + (i + 1) * p.height) * 4));
  return Buffer.concat(rows);
}

/** Opaque pixels of a figure, by colour: what tells one player from another. */
function colours(pixels: Buffer): Set<string> {
  const seen = new Set<string>();
  for (let o = 0; o < pixels.length; o += 4) if (pixels[o + 3] === 255) seen.add(`${pixels[o]},${pixels[o + 1]},${pixels[o + 2]}`);
  return seen;
}

test('a group of three has the three players left to right, each its own render at the same options', async (t) => {
  const names = ['Knight', 'Robot', 'Astronaut'];
  const group = await picture(`/v1/group/${SIZE}?names=${names.join(',')}&${OPTIONS}`);
  t.is(group.height, SIZE);
  t.is(group.width, 3 * SIZE);
  const figures = names.map((_, i) => band(group, i));
  for (const [i, name] of names.entries()) {
    const alone = await picture(`/v1/render/${name}/${SIZE}?${OPTIONS}`);
    t.true(figures[i].equals(alone.data), `figure ${i} is ${name}`);
    t.true(colours(figures[i]).size > 10, `figure ${i} is drawn`);
  }
  // Each band has colours the others lack: three different players, not one drawn three times.
  for (const [i, own] of figures.map(colours).entries()) {
    const others = new Set(figures.filter((_, j) => j !== i).flatMap((f) => [...colours(f)]));
    t.true([...own].filter((c) => !others.has(c)).length > 20, `figure ${i} has colours of its own`);
  }
  // The same names in another order are another picture, in that order.
  const turned = await picture(`/v1/group/${SIZE}?names=Astronaut,Knight&${OPTIONS}`);
  t.true(band(turned, 0).equals(figures[2]));
  t.true(band(turned, 1).equals(figures[0]));
});

test('an unknown name is left out and named in X-Group-Missing; none found is 404', async (t) => {
  const r = await h.get(`/v1/group/${SIZE}?names=Knight,Nobody_Here,Robot&${OPTIONS}`);
  t.is(r.status, 200);
  t.is(r.headers.get('x-group-missing'), 'Nobody_Here');
  t.regex(r.headers.get('access-control-expose-headers') ?? '', /X-Group-Missing/);
  // A group missing someone is kept no longer than a 404: that player may exist soon.
  t.is(r.headers.get('cache-control'), 'public, max-age=60');
  const group = await decodePng(r.bytes);
  t.is(group.width, 2 * SIZE);
  t.true(band(group, 1).equals((await picture(`/v1/render/Robot/${SIZE}?${OPTIONS}`)).data));
  const again = await h.get(`/v1/group/${SIZE}?names=Knight,Nobody_Here,Robot&${OPTIONS}`, { headers: { 'if-none-match': r.headers.get('etag')! } });
  t.is(again.status, 304);
  t.is(again.headers.get('x-group-missing'), 'Nobody_Here');
  const complete = await h.get(`/v1/group/${SIZE}?names=Knight,Robot&${OPTIONS}`);
  t.is(complete.headers.get('x-group-missing'), null);
  t.regex(complete.headers.get('cache-control') ?? '', /immutable/);
  const none = await h.get(`/v1/group/${SIZE}?names=Nobody_Here,Nobody_There`);
  t.is(none.status, 404);
  t.is(none.json.code, 'not_found');
  t.is(none.headers.get('x-group-missing'), null);
});

test('at most 8 names; empty entries, the elytra and a missing list are refused', async (t) => {
  const eight = await h.get(`/v1/group/16?names=${Array(8).fill('Knight').join(',')}`);
  t.is(eight.status, 200, 'the same player may come twice');
  t.is((await decodePng(eight.bytes)).width, 8 * 16);
  for (const path of [`/v1/group/16?names=${Array(9).fill('Knight').join(',')}`, '/v1/group/16?names=Knight,,Robot', '/v1/group/16?names=Knight&equip=elytra', '/v1/group/16']) {
    const r = await h.get(path);
    t.is(r.status, 400, path);
  }
});

test('a group comes in every format with its own ETag, a 304 and the image headers', async (t) => {
  const png = await h.get(`/v1/group/${SIZE}?names=Knight,Robot&${OPTIONS}`);
  t.is(png.headers.get('content-type'), 'image/png');
  t.regex(png.headers.get('cache-control') ?? '', /^public, max-age=\d+, immutable$/);
  const etag = png.headers.get('etag')!;
  t.is((await h.get(`/v1/group/${SIZE}?names=Knight,Robot&${OPTIONS}`, { headers: { 'if-none-match': etag } })).status, 304);
  const webp = await h.get(`/v1/group/${SIZE}.webp?names=Knight,Robot&${OPTIONS}`);
  t.is(webp.headers.get('content-type'), 'image/webp');
  t.not(webp.headers.get('etag'), etag);
  t.true((await decodePng(webp.bytes)).data.equals((await decodePng(png.bytes)).data));
  // Another option is another picture and another tag.
  const other = await h.get(`/v1/group/${SIZE}?names=Knight,Robot&yaw=-20`);
  t.not(other.headers.get('etag'), etag);
});

test('a group costs the work budget one render per player', async (t) => {
  // No farm: a group the budget admits goes on to the farm and finds none (503); one it does not admit is 429 first.
  const tight = await startSkins({ RENDER_WORKERS: '0', IMAGE_WORK_BUDGET: '5', TRUST_PROXY: '1' });
  t.teardown(() => tight.stop());
  const from = (client: string) => ({ headers: { 'x-forwarded-for': client } });
  // One render of 128 px costs 5; three cost 13.
  const one = await tight.get('/v1/group/128?names=Knight', from('198.51.100.1'));
  t.is(one.status, 503);
  t.is(one.json.code, 'overloaded');
  const three = await tight.get('/v1/group/128?names=Knight,Robot,Astronaut', from('198.51.100.2'));
  t.is(three.status, 429);
  t.is(three.json.code, 'rate_limited');
});

test('each player\'s uncached lookup is charged to the client, as an image\'s is', async (t) => {
  const budgets = { OFFICIAL_NAMES_BUDGET: '600/600:60', OFFICIAL_PROFILES_BUDGET: '600/600:60', EXTERNAL_NAMES_BUDGET: '1200/600:60', EXTERNAL_PROFILES_BUDGET: '600/600:60' };
  const lookups = await startSkins({ RENDER_WORKERS: '0', TRUST_PROXY: '1', UPSTREAM_CLIENT_LOOKUPS: '4', ...budgets });
  t.teardown(() => lookups.stop());
  // Eight unknown names ask both sources each: past 4 lookups the client is refused, not told "none found".
  const names = Array.from({ length: 8 }, (_, i) => `NoSuchPlayer${i}`).join(',');
  const refused = await lookups.get(`/v1/group/64?names=${names}`, { headers: { 'x-forwarded-for': '198.51.100.3' } });
  t.is(refused.status, 429, refused.text.slice(0, 200));
  t.is(refused.json.code, 'rate_limited');
  const fresh = await lookups.get('/v1/group/64?names=NoSuchPlayerA', { headers: { 'x-forwarded-for': '198.51.100.4' } });
  t.is(fresh.status, 404, 'another client still gets its answer');
});
