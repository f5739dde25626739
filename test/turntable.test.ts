// Turntables through HTTP with the real render farm (headless Chromium) and sharp: the frame
// count of each format, every checked frame equal to the still render at its yaw, the APNG's own
// chunks, bad parameters, the turntable budget and the cache; and at the farm, that a turntable
// is one call into a page with its texture sent once.
import { fileURLToPath } from 'node:url';
import test from 'ava';
import sharp from 'sharp';
import { defaultSkin } from '../renderer/default-skins.ts';
import type { RenderError } from '../renderer/errors.ts';
import { RenderFarm } from '../renderer/farm.ts';
import type { RenderJob } from '../renderer/jobs.ts';
import { silentLogger } from '../shared/log.ts';
import { startInOneWindow } from './helpers/rate-window.ts';
import { decodePng, saveArtifact, type Picture } from './helpers/png.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';
import { chunk, SIGNATURE } from '../renderer/png-encode.ts';

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins({ RENDER_WORKERS: '2', TRUST_PROXY: 'true' });
});
test.after.always(async () => {
  await h?.stop();
});

// Each test its own client address: the turntable budget is per client.
const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });

async function fetchOk(path: string, ip: string) {
  const r = await h.get(path, from(ip));
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text.slice(0, 200)}`);
  return r;
}

/** Every frame of an animation sharp reads (WebP, GIF), as RGBA pictures. */
async function framesOf(animation: Buffer): Promise<Picture[]> {
  const { data, info } = await sharp(animation, { animated: true }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const height = info.pageHeight ?? info.height;
  const bytes = info.width * height * 4;
  return Array.from({ length: info.height / height }, (_, i) => ({ width: info.width, height, data: data.subarray(i * bytes, (i + 1) * bytes) }));
}

interface ApngChunk { type: string; data: Buffer }
function chunksOf(png: Buffer): ApngChunk[] {
  const chunks: ApngChunk[] = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    chunks.push({ type: png.toString('latin1', at + 4, at + 8), data: png.subarray(at + 8, at + 8 + length) });
    at += 12 + length;
  }
  return chunks;
}

/**
 * An APNG's frames, each rebuilt into a PNG of its own (its IDAT or fdAT data under the header)
 * and decoded by sharp: the APNG's chunks, its sequence numbers and every frame's data checked.
 */
async function apngFrames(apng: Buffer): Promise<{ frames: Picture[]; declared: number; delays: number[][] }> {
  const chunks = chunksOf(apng);
  const header = chunks.find((c) => c.type === 'IHDR')!;
  const actl = chunks.find((c) => c.type === 'acTL')!;
  const perFrame: Buffer[][] = [];
  const delays: number[][] = [];
  let sequence = 0;
  for (const c of chunks) {
    if (c.type === 'fcTL') {
      if (c.data.readUInt32BE(0) !== sequence++) throw new Error('fcTL out of sequence');
      delays.push([c.data.readUInt16BE(20), c.data.readUInt16BE(22)]);
      perFrame.push([]);
    } else if (c.type === 'IDAT') perFrame.at(-1)!.push(c.data);
    else if (c.type === 'fdAT') {
      if (c.data.readUInt32BE(0) !== sequence++) throw new Error('fdAT out of sequence');
      perFrame.at(-1)!.push(c.data.subarray(4));
    }
  }
  const frames = await Promise.all(perFrame.map((data) => decodePng(Buffer.concat([SIGNATURE, chunk('IHDR', header.data), ...data.map((d) => chunk('IDAT', d)), chunk('IEND', Buffer.alloc(0))]))));
  return { frames, declared: actl.data.readUInt32BE(0), delays };
}

async function still(path: string, ip: string): Promise<Picture> {
  return decodePng((await fetchOk(path, ip)).bytes);
}

const same = (a: Picture, b: Picture) => a.width === b.width && a.height === b.height && a.data.equals(b.data);

test('WebP by default: the frames asked for, looping, each frame the still render at its yaw', async (t) => {
  const ip = '198.51.100.1';
  const r = await fetchOk('/v1/turntable/ClassicSteve/64?frames=12&yaw=30&pitch=10&pose=walking', ip);
  saveArtifact('turntable', 'default.webp', r.bytes);
  t.is(r.headers.get('content-type'), 'image/webp');
  t.is(r.headers.get('cache-control'), 'public, max-age=300, immutable');
  const meta = await sharp(r.bytes, { animated: true }).metadata();
  t.like(meta, { format: 'webp', pages: 12, width: 64, pageHeight: 64, loop: 0 });
  t.deepEqual(meta.delay, Array(12).fill(83), 'fps 12 by default: 1000/12 ms, rounded');
  const frames = await framesOf(r.bytes);
  // The first frame at `yaw`, then 360/12 = 30 degrees further each: lossless, so pixel for pixel.
  t.true(same(frames[0], await still('/v1/render/ClassicSteve/64?yaw=30&pitch=10&pose=walking', ip)), 'frame 0 is the render at yaw 30');
  t.true(same(frames[3], await still('/v1/render/ClassicSteve/64?yaw=120&pitch=10&pose=walking', ip)), 'frame 3 is the render at yaw 120');
  t.true(same(frames[8], await still('/v1/render/ClassicSteve/64?yaw=-90&pitch=10&pose=walking', ip)), 'frame 8 is the render at yaw 270 = -90');
  t.true(same(frames[11], await still('/v1/render/ClassicSteve/64?yaw=0&pitch=10&pose=walking', ip)), 'frame 11 is the render at yaw 360 = 0');
  // The defaults: 36 frames, the sized render with no options first (the spec's yaw 0, pitch 0).
  const plain = await fetchOk('/v1/turntable/ClassicSteve?size=32', ip);
  t.is((await sharp(plain.bytes).metadata()).pages, 36);
  t.true(same((await framesOf(plain.bytes))[0], await still('/v1/render/ClassicSteve/32', ip)));
});

test('APNG: acTL, fcTL and fdAT in sequence, the delay exact, every frame decodable and the still at its yaw', async (t) => {
  const ip = '198.51.100.2';
  const r = await fetchOk('/v1/turntable/CapeWearer/48?format=apng&frames=8&fps=25&bg=336699&shadow=0&yaw=0', ip);
  saveArtifact('turntable', 'apng', r.bytes);
  t.is(r.headers.get('content-type'), 'image/apng');
  const { frames, declared, delays } = await apngFrames(r.bytes);
  t.is(declared, 8);
  t.is(frames.length, 8);
  t.deepEqual(delays, Array(8).fill([1, 25]));
  for (const i of [0, 5]) t.true(same(frames[i], await still(`/v1/render/CapeWearer/48?bg=336699&shadow=0&yaw=${i * 45 > 180 ? i * 45 - 360 : i * 45}`, ip)), `frame ${i}`);
  // A reader without APNG support shows the first frame: it is the image's own IDAT.
  t.true(same(await decodePng(r.bytes), frames[0]));
});

test('the largest turntable (72 frames of 256 px) draws every frame whole', async (t) => {
  const ip = '198.51.100.3';
  const r = await fetchOk('/v1/turntable/ClassicSteve/256?format=apng&frames=72&pitch=20&yaw=0', ip);
  const { frames, declared } = await apngFrames(r.bytes);
  t.is(declared, 72);
  // The last tiles lie furthest into the page's frame: one cut off would differ from the still.
  t.true(same(frames[71], await still('/v1/render/ClassicSteve/256?pitch=20&yaw=-5', ip)));
  t.true(same(frames[40], await still('/v1/render/ClassicSteve/256?pitch=20&yaw=-160', ip)));
});

test('GIF: the frames asked for, decodable, close to the still on a background; transparent without one', async (t) => {
  const ip = '198.51.100.4';
  const r = await fetchOk('/v1/turntable/ClassicSteve/64?format=gif&frames=10&bg=ffffff', ip);
  saveArtifact('turntable', 'bg.gif', r.bytes);
  t.is(r.headers.get('content-type'), 'image/gif');
  t.like(await sharp(r.bytes, { animated: true }).metadata(), { format: 'gif', pages: 10, pageHeight: 64, loop: 0 });
  const [first] = await framesOf(r.bytes);
  const png = await still('/v1/render/ClassicSteve/64?bg=ffffff', ip);
  let difference = 0;
  for (let i = 0; i < png.data.length; i += 1) difference += Math.abs(png.data[i] - first.data[i]);
  t.true(difference / png.data.length < 4, `256 colours: a mean difference of ${difference / png.data.length} a channel`);
  const clear = await fetchOk('/v1/turntable/ClassicSteve/64?format=gif&frames=8', ip);
  const [frame] = await framesOf(clear.bytes);
  t.is(frame.data[3], 0, 'the corner is transparent');
  t.true([...frame.data].filter((_, i) => i % 4 === 3).every((a) => a === 0 || a === 255), 'GIF alpha is all or nothing');
});

test('the player record gives the turntable\'s addresses', async (t) => {
  const { images, uuid } = (await h.get('/v1/player/ClassicSteve', from('198.51.100.9'))).json.data;
  t.true(images.turntable.url.endsWith(`/v1/turntable/${uuid}/128`));
  t.true(images.turntable.sizeable.endsWith(`/v1/turntable/${uuid}/{size}`));
  const r = await fetchOk(new URL(images.turntable.sizeable.replace('{size}', '24')).pathname, '198.51.100.9');
  t.is((await sharp(r.bytes).metadata()).pages, 36);
});

test('bad parameters are bad_request', async (t) => {
  for (const query of ['frames=7', 'frames=73', 'frames=x', 'frames=36.5', 'fps=0', 'fps=51', 'format=avif', 'format=png', 'size=257', 'yaw=181', 'pose=dancing', 'bg=red']) {
    const r = await h.get(`/v1/turntable/ClassicSteve?${query}`, from('198.51.100.5'));
    t.is(r.status, 400, query);
    t.is(r.json.code, 'bad_request', query);
  }
  t.is((await h.get('/v1/turntable/ClassicSteve/300', from('198.51.100.5'))).status, 400);
  t.is((await h.get('/v1/turntable/NobodyAtAll', from('198.51.100.5'))).json.code, 'not_found');
});

test('an extension names the format as format= does (.png is the APNG): the same image, ETag and cache entry', async (t) => {
  const ip = '198.51.100.10';
  for (const [extension, format, type] of [['gif', 'gif', 'image/gif'], ['png', 'apng', 'image/apng'], ['webp', 'webp', 'image/webp']]) {
    const asked = await fetchOk(`/v1/turntable/Ranger/24?frames=8&format=${format}`, ip);
    const named = await fetchOk(`/v1/turntable/Ranger/24.${extension}?frames=8`, ip);
    t.is(named.headers.get('content-type'), type, extension);
    t.is(named.headers.get('etag'), asked.headers.get('etag'), extension);
    t.is(named.headers.get('x-cache'), 'HIT', `${extension}: the cache entry format= drew`);
    t.true(named.bytes.equals(asked.bytes), extension);
    // Without a size, the extension sits on the name.
    const onName = await fetchOk(`/v1/turntable/Ranger.${extension.toUpperCase()}?size=24&frames=8`, ip);
    t.is(onName.headers.get('etag'), asked.headers.get('etag'), `${extension} on the name`);
    const conditional = await h.get(`/v1/turntable/Ranger/24.${extension}?frames=8`, { headers: { 'x-forwarded-for': ip, 'if-none-match': asked.headers.get('etag')! } });
    t.is(conditional.status, 304, `${extension}: If-None-Match`);
  }
  // Decoded: 8 frames each, the format the extension names.
  t.like(await sharp((await fetchOk('/v1/turntable/Ranger/24.gif?frames=8', ip)).bytes, { animated: true }).metadata(), { format: 'gif', pages: 8, pageHeight: 24 });
  t.like(await sharp((await fetchOk('/v1/turntable/Ranger/24.webp?frames=8', ip)).bytes, { animated: true }).metadata(), { format: 'webp', pages: 8, pageHeight: 24 });
  const apng = await apngFrames((await fetchOk('/v1/turntable/Ranger/24.png?frames=8', ip)).bytes);
  t.is(apng.frames.length, 8);
  t.is(apng.frames[0].width, 24);
});

test('an extension that names no animation is refused by name, not read as a bad size; one disagreeing with format= is refused', async (t) => {
  const ip = '198.51.100.11';
  for (const path of ['/v1/turntable/Ranger/96.avif', '/v1/turntable/Ranger/96.jpg', '/v1/turntable/Ranger.avif?size=96', '/v1/turntable/Ranger.jpeg']) {
    const r = await h.get(path, from(ip));
    t.is(r.status, 400, path);
    t.is(r.json.code, 'bad_request', path);
    t.regex(r.json.message_en, /turntables are webp, gif or png \(APNG\)/, path);
    t.notRegex(r.json.message_en, /size must be/, path);
    t.regex(r.json.message, /webp、gif 或 png（APNG）/, `${path} (zh)`);
  }
  for (const [path, named] of [['/v1/turntable/Ranger/96.gif?format=webp', 'gif'], ['/v1/turntable/Ranger/96.png?format=gif', 'apng']]) {
    const r = await h.get(path, from(ip));
    t.is(r.status, 400, path);
    t.regex(r.json.message_en, new RegExp(`the extension, which names ${named}, disagree`), path);
  }
  // A number after the dot is no extension: still the size's own complaint.
  t.regex((await h.get('/v1/turntable/Ranger/96.5', from(ip))).json.message_en, /size must be an integer/);
  // A Bedrock name's leading dot is no extension.
  t.is((await h.get('/v1/turntable/.Pocket_Ranger/16.gif?frames=8', from(ip))).status, 200);
});

test('ETag from the texture and the options: a 304, a cached answer, another tag per format', async (t) => {
  const ip = '198.51.100.6';
  const path = '/v1/turntable/SlimAlex/32?frames=8&yaw=10';
  const first = await fetchOk(path, ip);
  const again = await fetchOk(path, ip);
  t.is(first.headers.get('x-cache'), 'MISS');
  t.is(again.headers.get('x-cache'), 'HIT');
  t.is(again.headers.get('etag'), first.headers.get('etag'));
  t.true(again.bytes.equals(first.bytes));
  const conditional = await h.get(path, { headers: { 'x-forwarded-for': ip, 'if-none-match': first.headers.get('etag')! } });
  t.is(conditional.status, 304);
  const head = await h.get(path, { method: 'HEAD', headers: { 'x-forwarded-for': ip } });
  t.like({ status: head.status, type: head.headers.get('content-type'), etag: head.headers.get('etag'), length: head.bytes.length }, { status: 200, type: 'image/webp', etag: first.headers.get('etag'), length: 0 });
  const gif = await fetchOk(`${path}&format=gif`, ip);
  t.not(gif.headers.get('etag'), first.headers.get('etag'));
  t.not((await fetchOk('/v1/turntable/SlimAlex/32?frames=9&yaw=10', ip)).headers.get('etag'), first.headers.get('etag'));
  // The same options as a still, yet not the still's tag.
  t.not((await fetchOk('/v1/render/SlimAlex/32?yaw=10', ip)).headers.get('etag'), first.headers.get('etag'));
});

test('turntables drawn count against their own budget; cached ones do not', async (t) => {
  const ip = '198.51.100.7';
  // Windows are aligned to the clock: the burst must fall in one.
  await startInOneWindow(30_000);
  // Cheap to draw: 8 frames of 16 px, each a yaw of its own.
  const drawn = [];
  for (let i = 0; i < 12; i += 1) drawn.push(await h.get(`/v1/turntable/ClassicSteve/16?frames=8&yaw=${i}`, from(ip)));
  t.deepEqual(drawn.map((r) => r.status), Array(12).fill(200));
  const limited = await h.get('/v1/turntable/ClassicSteve/16?frames=8&yaw=12', from(ip));
  t.is(limited.status, 429);
  t.is(limited.json.code, 'rate_limited');
  t.truthy(limited.headers.get('retry-after'));
  // A cached turntable and a still are still served to that client; another client draws.
  t.is((await h.get('/v1/turntable/ClassicSteve/16?frames=8&yaw=0', from(ip))).status, 200);
  t.is((await h.get('/v1/render/ClassicSteve/16?yaw=12', from(ip))).status, 200);
  t.is((await h.get('/v1/turntable/ClassicSteve/16?frames=8&yaw=12', from('198.51.100.8'))).status, 200);
});

test('a turntable is one call into one page: its frames in one batch, its texture sent once, no still among them; the queue counts its frames', async (t) => {
  const pageExtension = fileURLToPath(new URL('helpers/page-that-counts.js', import.meta.url));
  const farm = await RenderFarm.create({ workers: 1, gpu: 'off', pageExtension, queueLimit: 60 }, silentLogger);
  try {
    const job: RenderJob = { kind: 'render', skin: defaultSkin('kai', false), slim: false, size: 40, yaw: 0, pitch: 10, shadow: true, outer: true, bg: null };
    const yaws = Array.from({ length: 36 }, (_, i) => i * 10 - 170);
    // Stills (of another skin) queued around it are batched among themselves, never with its frames.
    const other = { ...job, skin: defaultSkin('ari', false), size: 41 };
    const [stills, frames, later] = await Promise.all([
      Promise.all([1, 2, 3].map((yaw) => farm.render({ ...other, yaw }))),
      farm.renderFrames(job, yaws),
      Promise.all([4, 5, 6].map((yaw) => farm.render({ ...other, yaw }))),
    ]);
    t.is(frames.length, 36);
    t.is(stills.length + later.length, 6);
    t.true(frames[17].equals(await farm.render({ ...job, yaw: yaws[17] })), 'frame 17 is the still at its yaw');
    const [memory] = await farm.pageMemory() as unknown as Array<{ batches: Array<{ sizes: number[]; yaws: number[]; textureBytesSent: number }> }>;
    const withFrames = memory.batches.filter((b) => b.sizes.includes(40));
    t.deepEqual(withFrames[0], { sizes: Array(36).fill(40), yaws, textureBytesSent: 1 });
    t.is(memory.batches.flatMap((b) => b.sizes).filter((s) => s === 41).length, 6);
    t.is(withFrames.length, 2, 'the turntable, then the still of frame 17');
    // The queue counts a waiting turntable by its frames: 36 wait, 36 more would pass 60.
    const drawing = farm.renderFrames(job, yaws);
    const waiting = farm.renderFrames(job, yaws);
    const refused = await t.throwsAsync(farm.renderFrames(job, yaws));
    t.is((refused as RenderError).kind, 'queue_full');
    t.is((await farm.render({ ...job, yaw: 1 })).subarray(1, 4).toString(), 'PNG', 'a still is still queued');
    t.is((await Promise.all([drawing, waiting])).flat().length, 72);
    await t.throwsAsync(farm.renderFrames({ ...job, kind: 'head' }, yaws), { message: /frames are drawn for renders/ });
    await t.throwsAsync(farm.renderFrames(job, []), { message: /at least one/ });
  } finally {
    await farm.close();
  }
});
