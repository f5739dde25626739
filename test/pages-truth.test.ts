// What the pages tell a newcomer in the first hour, checked against the running service in both
// languages (issue "The first hour, again"): /status shows the renderer's live figures and what
// the image library can encode; the landing page names every kind of image and format it draws,
// captions its examples and links the example lookup; /docs says what the services are and how
// to try one; the document describes the 429 a preflight can get; the sample media library's
// placeholder videos are labelled as such.
import path from 'node:path';
import test from 'ava';
import sharp from 'sharp';
import { removeTempDirs, tempDir } from './helpers/media-library.ts';
import { call } from './helpers/service.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
test.before(async () => {
  const dir = await tempDir('pages-truth');
  // MEDIA_DIR does not exist: media writes its sample library there.
  h = await startSkins({ SERVICES: 'skins,media', MEDIA_DIR: path.join(dir, 'media'), DATA_DIR: path.join(dir, 'data'), RENDER_WORKERS: '1', TRUST_PROXY: 'true', DEMO_PLAYER: 'Knight' });
});
test.after.always(async () => {
  await h?.stop();
  await removeTempDirs();
});

const LANGS = ['en', 'zh'] as const;
const inLang = (lang: string) => ({ headers: { 'accept-language': lang } });

/** The cell of the row whose heading is `heading` (the pages' tables are <tr><th>…</th><td>…</td></tr>). */
function row(page: string, heading: string): string {
  const match = new RegExp(`<tr><th>${heading}</th><td>(.*?)</td></tr>`, 's').exec(page);
  if (!match) throw new Error(`no row "${heading}"`);
  return match[1];
}

/** Text of some markup: tags removed, the one entity these pages' addresses hold read back. */
const textOf = (markup: string) => markup.replace(/<[^>]+>/g, '').replaceAll('&amp;', '&');

// Serial (AVA runs serial tests first): no other test draws between the JSON and the page.
test.serial('/status shows the renderer\'s live figures and each encoder of the image library, from the service\'s own state', async (t) => {
  // One image drawn, so the renderer has a last render and a count to show.
  const drawn = await h.get('/v1/render/Knight/64');
  t.is(drawn.status, 200);
  t.is((await sharp(drawn.bytes).metadata()).format, 'png');
  const { render, textures } = (await h.get('/v1/status')).json.data;
  t.is(render.pages_alive, 1);
  t.truthy(render.last_drawn_at);
  const labels = {
    en: { pages: 'Pages alive', last: 'Last render', failures: 'Failures in a row', jobs: 'Jobs drawn / failed', library: 'Image library', ok: 'OK' },
    zh: { pages: '存活页面', last: '最近一次渲染', failures: '连续失败', jobs: '已完成 / 失败', library: '图像库', ok: '正常' },
  };
  for (const lang of LANGS) {
    const page = (await h.get('/status', inLang(lang))).text;
    const l = labels[lang];
    t.is(row(page, l.pages), `${render.pages_alive} / ${render.workers}`, lang);
    t.true(row(page, l.last).includes(`datetime="${render.last_drawn_at}"`), lang);
    t.is(row(page, l.failures), String(render.failed_in_a_row), lang);
    t.is(row(page, l.jobs), `${render.completed} / ${render.failed}`, lang);
    // Every encoder the answers use, as this process found it (this sharp has them all).
    t.is(textOf(row(page, l.library)), `sharp ${sharp.versions.sharp} (libvips ${sharp.versions.vips}): PNG ${l.ok} · WebP ${l.ok} · AVIF ${l.ok} · GIF ${l.ok}`, lang);
    // Texture downloads are a source: images fail when their host does.
    t.is(row(page, 'textures'), textures.ok ? l.ok : lang === 'en' ? 'failing' : '异常', lang);
  }
  // /ready reports the same library as a check of its own, naming each format it writes.
  const ready = await h.get('/ready');
  t.like(ready.json.checks.find((c: { name: string }) => c.name === 'image_library'), { status: 'ok', critical: true, detail: `sharp ${sharp.versions.sharp} (libvips ${sharp.versions.vips}): png, webp, avif, gif` });
});

test('the landing page names turntables, WebP/AVIF and Bedrock, captions its images and links the example lookup', async (t) => {
  const words = {
    en: { turntable: 'turntables', bedrock: 'Bedrock', avatar: 'Avatar', render: '3D render' },
    zh: { turntable: '转盘动画', bedrock: '基岩版', avatar: '头像', render: '3D 渲染' },
  };
  for (const lang of LANGS) {
    const page = (await h.get('/', inLang(lang))).text;
    const w = words[lang];
    const intro = /<h1 id="heading">.*?<\/h1>\s*<p>(.*?)<\/p>/s.exec(page)![1];
    for (const word of [w.turntable, w.bedrock, 'WebP', 'AVIF', 'PNG', 'GIF', 'APNG']) t.true(intro.includes(word), `${lang}: ${word}`);
    t.false(/draws PNGs|生成 PNG/.test(page), `${lang}: not "PNGs" alone`);
    t.regex(page, /<a id="example-record" href="\/v1\/player\/Knight"><code>\/v1\/player\/Knight<\/code><\/a>/, lang);
    const captions = [...page.matchAll(/<figure><img id="([^"]+)" src="([^"]+)"[^>]*>\s*<figcaption>(.*?)<\/figcaption><\/figure>/gs)];
    t.deepEqual(captions.map((c) => c[1]), ['example-avatar', 'example-render'], lang);
    t.true(textOf(captions[0][3]).startsWith(w.avatar), lang);
    t.true(textOf(captions[1][3]).startsWith(w.render), lang);
    // Each caption names the address that drew its image, and the address draws it.
    for (const [, , src, caption] of captions) {
      const address = textOf(src);
      t.true(textOf(caption).includes(address), `${lang}: ${address} in its caption`);
      t.is((await sharp((await h.get(address)).bytes).metadata()).format, 'png');
    }
  }
  // The link answers the record it promises.
  const record = await h.get('/v1/player/Knight');
  t.is(record.json.data.name, 'Knight');
});

test('/docs says what the services are and how to try an operation, not the document\'s conventions', async (t) => {
  for (const lang of LANGS) {
    const page = (await h.get('/docs', inLang(lang))).text;
    const before = page.slice(0, page.indexOf('<div id="api-viewer"'));
    t.false(/components\.responses|x-status/.test(before), lang);
    t.true(before.includes('Try it out') && before.includes('Execute'), `${lang}: how to try one`);
    t.true(before.includes('Swagger UI') && before.includes('<a href="/openapi.json">/openapi.json</a>'), lang);
    t.true(lang === 'en' ? /skins .*media .*search/.test(before) : /皮肤.*媒体.*搜索/.test(before), `${lang}: the three services`);
  }
});

test('the document: the skins tag names every image format, and a preflight\'s 429 is described as it is answered', async (t) => {
  const doc = (await h.get('/openapi.json')).json;
  const skins = doc.tags.find((tag: { name: string }) => tag.name === 'skins').description;
  t.false(skins.includes('PNG images'));
  for (const format of ['PNG', 'WebP', 'AVIF', 'APNG', 'GIF']) t.true(skins.includes(format), format);

  const { Preflight, PreflightLimited } = doc.components.responses;
  t.true(Preflight.description.includes('PreflightLimited'));
  t.is(PreflightLimited['x-status'], 429);
  // Spend the site quota with preflights from one client: the refusal is the one described.
  const preflight = { method: 'OPTIONS', headers: { 'x-forwarded-for': '203.0.113.77', origin: 'https://example.org', 'access-control-request-method': 'GET' } };
  let answer = await fetch(`${h.base}/v1/player/Knight`, preflight);
  for (let sent = 1; answer.status === 204 && sent < 1000; sent += 1) {
    await answer.arrayBuffer();
    answer = await fetch(`${h.base}/v1/player/Knight`, preflight);
  }
  t.is(answer.status, PreflightLimited['x-status']);
  const body = await answer.json();
  t.is(body.code, 'rate_limited');
  t.true(JSON.stringify(PreflightLimited.content['application/json'].schema).includes('"rate_limited"'));
  for (const name of Object.keys(PreflightLimited.headers)) t.truthy(answer.headers.get(name), name);
  t.regex(PreflightLimited.description, new RegExp(`\\b${answer.headers.get('x-ratelimit-limit') ?? '\\d+'} requests per minute`));
});

test('the sample media library labels its placeholder videos as such, in both languages of the media landing page', async (t) => {
  for (const lang of LANGS) {
    const page = (await call(`${h.app.urls.media}/`, inLang(lang))).text;
    const clips = /<tr data-alias="clips"><td>(.*?)<\/td>/.exec(page)![1];
    t.is(clips, 'Demo clips (placeholder videos with no picture)', lang);
    t.false(page.includes('header-only'), lang);
  }
});
