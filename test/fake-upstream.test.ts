// The fake upstream over real HTTP: shapes, limits, signatures, textures, OAuth and control knobs.
import test, { type ExecutionContext } from 'ava';
import { createVerify } from 'node:crypto';
import sharp from 'sharp';
import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions } from '../scripts/fake-upstream/server.ts';
import { pixelHash, textureHash } from '../scripts/fake-upstream/texture-hash.ts';

/** A fresh fake per test: counters and knobs never leak between concurrent tests. */
async function fake(t: ExecutionContext, options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const f = await startFakeUpstream(options);
  t.teardown(() => f.close());
  return f;
}

async function get(url: string, init: RequestInit = {}) {
  const res = await fetch(url, { redirect: 'manual', ...init });
  const text = await res.text();
  const json = (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : undefined;
  return { status: res.status, headers: res.headers, text, json };
}

const postJson = (url: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  get(url, { method: 'POST', headers, body: JSON.stringify(body) });

const postForm = (url: string, fields: Record<string, string>) =>
  get(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });

const decode = (value: string) => Buffer.from(value, 'base64').toString('utf8');

function verified(value: string, signature: string, publicPem: string): boolean {
  return createVerify('RSA-SHA1').update(value).verify(publicPem, signature, 'base64');
}

async function officialId(f: FakeUpstream, name: string): Promise<string> {
  return (await get(`${f.env.OFFICIAL_SERVICES_URL}/minecraft/profile/lookup/name/${encodeURIComponent(name)}`)).json.id;
}

async function officialTextures(f: FakeUpstream, name: string) {
  const profile = (await get(`${f.env.OFFICIAL_SESSION_URL}/session/minecraft/profile/${await officialId(f, name)}`)).json;
  return JSON.parse(decode(profile.properties[0].value)).textures;
}

// docs/upstream.md A4: the spec's 2x3 buffer. The transparent pixel carries colour to prove it is zeroed.
const VECTOR_PIXELS: Record<string, [number, number, number, number]> = {
  '0,0': [255, 0, 0, 255], '0,1': [0, 0, 255, 255], '0,2': [255, 0, 255, 255],
  '1,0': [0, 255, 0, 255], '1,1': [24, 48, 96, 0], '1,2': [255, 255, 0, 255],
};
const VECTOR_HASH = '47a4c518f80f94ad8737713e0325a98e1f2647f962b9a646f58cd0bbd5afe683';

test('pixel hash matches the authlib-injector test vector, from raw pixels and from a PNG', async (t) => {
  const rgba = new Uint8Array(2 * 3 * 4);
  for (const [at, pixel] of Object.entries(VECTOR_PIXELS)) {
    const [x, y] = at.split(',').map(Number);
    rgba.set(pixel, (y * 2 + x) * 4);
  }
  t.is(pixelHash(2, 3, rgba), VECTOR_HASH);
  const png = await sharp(Buffer.from(rgba), { raw: { width: 2, height: 3, channels: 4 } }).png().toBuffer();
  t.is(await textureHash(png), VECTOR_HASH);
  rgba[(1 * 2 + 1) * 4] = 99; // colour under alpha 0 does not count
  t.is(pixelHash(2, 3, rgba), VECTOR_HASH);
  rgba[0] = 254; // a visible change does
  t.not(pixelHash(2, 3, rgba), VECTOR_HASH);
});

test('official name lookup ignores case, keeps the real capitalisation, and has both not-found styles', async (t) => {
  const f = await fake(t);
  const hit = await get(`${f.env.OFFICIAL_SERVICES_URL}/minecraft/profile/lookup/name/sLiMaLeX`);
  t.is(hit.status, 200);
  t.deepEqual(hit.json, { id: f.players.byName('official', 'SlimAlex')!.uuid, name: 'SlimAlex' });
  t.regex(hit.json.id, /^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);

  const miss = await get(`${f.env.OFFICIAL_SERVICES_URL}/minecraft/profile/lookup/name/Nobody`);
  t.is(miss.status, 404);
  t.deepEqual(miss.json, { path: '/minecraft/profile/lookup/name/Nobody', errorMessage: "Couldn't find any profile with name Nobody" });

  const legacy = await get(`${f.env.OFFICIAL_API_URL}/users/profiles/minecraft/classicsteve`);
  t.deepEqual(legacy.json, { id: f.players.byName('official', 'ClassicSteve')!.uuid, name: 'ClassicSteve' });
  const legacyMiss = await get(`${f.env.OFFICIAL_API_URL}/users/profiles/minecraft/Nobody`);
  t.is(legacyMiss.status, 204);
  t.is(legacyMiss.text, '');
  t.is((await get(`${f.env.OFFICIAL_SERVICES_URL}/minecraft/profile/lookup/name/ExternalOnly`)).status, 404, 'external players are not official');
});

test('official bulk: JSON only, 1 to 10 names, answers the existing ones', async (t) => {
  const f = await fake(t);
  const url = `${f.env.OFFICIAL_SERVICES_URL}/minecraft/profile/lookup/bulk/byname`;
  t.is((await postJson(url, ['SlimAlex'], { 'content-type': 'text/plain' })).status, 415);
  for (const names of [[], Array.from({ length: 11 }, (_, i) => `gen_${i}`)]) {
    const r = await postJson(url, names);
    t.is(r.status, 400);
    t.deepEqual(r.json, { error: 'CONSTRAINT_VIOLATION', errorMessage: 'getProfileName.profileNames: size must be between 1 and 10' });
  }
  const ten = ['slimalex', 'Nobody', 'GEN_12', 'ExternalOnly', ...Array.from({ length: 6 }, (_, i) => `gen_${i}`)];
  const r = await postJson(url, ten);
  t.is(r.status, 200);
  const names = r.json.map((p: { name: string }) => p.name).sort();
  t.deepEqual(names, ['SlimAlex', 'gen_0', 'gen_1', 'gen_12', 'gen_2', 'gen_3', 'gen_4', 'gen_5']);
  t.true(r.json.every((p: { id: string }) => /^[0-9a-f]{32}$/.test(p.id)));
});

test('external bulk: at most 5 distinct names, echoed as asked', async (t) => {
  const f = await fake(t);
  const url = `${f.env.EXTERNAL_YGGDRASIL_URL}/api/profiles/minecraft`;
  const over = await postJson(url, ['a', 'b', 'c', 'd', 'e', 'f']);
  t.is(over.status, 403);
  t.deepEqual(over.json, { error: 'ForbiddenOperationException', errorMessage: 'You can query up to 5 players in one request.' });
  const r = await postJson(url, ['externalonly', 'Ext玩家', 'Nobody', 'ext_7', 'ClassicSteve', 'ext_7']);
  t.is(r.status, 200, 'duplicates are removed before the limit applies');
  t.deepEqual(r.json, [
    { id: f.players.byName('external', 'ExternalOnly')!.uuid, name: 'externalonly' },
    { id: f.players.byName('external', 'Ext玩家')!.uuid, name: 'Ext玩家' },
    { id: f.players.byName('external', 'ext_7')!.uuid, name: 'ext_7' },
  ]);
  // Offline UUIDs: Java's UUID.nameUUIDFromBytes("OfflinePlayer:ExternalOnly"), version 3.
  t.regex(r.json[0].id, /^[0-9a-f]{12}3[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
});

test('official session profile: pretty value, signed only with unsigned=false, 204 and 400', async (t) => {
  const f = await fake(t);
  const id = await officialId(f, 'SlimAlex');
  const url = `${f.env.OFFICIAL_SESSION_URL}/session/minecraft/profile/${id}`;
  const unsigned = (await get(url)).json;
  t.deepEqual(Object.keys(unsigned).sort(), ['id', 'name', 'profileActions', 'properties']);
  t.is(unsigned.properties[0].signature, undefined);
  t.false(decode(unsigned.properties[0].value).includes('signatureRequired'));

  const signed = (await get(`${url}?unsigned=false`)).json;
  const { value, signature } = signed.properties[0];
  const { official } = await f.publicKeys();
  t.true(verified(value, signature, official));
  t.false(verified(unsigned.properties[0].value, signature, official), 'the signature covers this value only');
  const text = decode(value);
  t.true(text.includes('\n  "profileName" : "SlimAlex"'), 'Mojang pretty-prints with " : "');
  const payload = JSON.parse(text);
  t.like(payload, { profileId: id, profileName: 'SlimAlex', signatureRequired: true, textures: { SKIN: { metadata: { model: 'slim' } } } });
  t.is(typeof payload.textures.CAPE.url, 'string');
  t.deepEqual(signed.profileActions, []);

  const classic = await officialTextures(f, 'ClassicSteve');
  t.deepEqual(Object.keys(classic.SKIN), ['url'], 'no metadata for classic skins');
  t.is(classic.CAPE, undefined);
  t.deepEqual(await officialTextures(f, 'NoSkin'), {});

  t.is((await get(`${f.env.OFFICIAL_SESSION_URL}/session/minecraft/profile/00000000000000000000000000000001`)).status, 204);
  const bad = await get(`${f.env.OFFICIAL_SESSION_URL}/session/minecraft/profile/not-a-uuid`);
  t.is(bad.status, 400);
  t.deepEqual(bad.json, { error: 'Bad Request', path: '/session/minecraft/profile/not-a-uuid' });
});

test('external metadata and profile: RSA-4096 key, compact value, both properties signed', async (t) => {
  const f = await fake(t);
  const meta = await get(`${f.env.EXTERNAL_YGGDRASIL_URL}/`);
  t.like(meta.json, { meta: { serverName: 'Fake LittleSkin', links: { homepage: f.env.EXTERNAL_URL } }, skinDomains: ['127.0.0.1'] });
  const { external } = await f.publicKeys();
  t.is(meta.json.signaturePublickey, external);
  const { createPublicKey } = await import('node:crypto');
  t.is(createPublicKey(external).asymmetricKeyDetails?.modulusLength, 4096);
  t.truthy(meta.headers.get('x-authlib-injector-api-location'));

  const player = f.players.byName('external', 'ExternalOnly')!;
  const url = `${f.env.EXTERNAL_YGGDRASIL_URL}/sessionserver/session/minecraft/profile/${player.uuid}`;
  const signed = (await get(`${url}?unsigned=false`)).json;
  t.deepEqual(signed.properties.map((p: { name: string }) => p.name), ['textures', 'uploadableTextures']);
  for (const p of signed.properties) t.true(verified(p.value, p.signature, external), p.name);
  t.is(signed.properties[1].value, 'skin,cape');
  const text = decode(signed.properties[0].value);
  t.false(text.includes(' '), 'Blessing Skin writes compact JSON');
  t.like(JSON.parse(text), { profileName: 'ExternalOnly', isPublic: true, signatureRequired: true, textures: { SKIN: { metadata: { model: 'slim' } } } });

  for (const query of ['', '?unsigned=true', '?unsigned=0']) {
    const r = (await get(`${url}${query}`)).json;
    t.true(r.properties.every((p: { signature?: string }) => p.signature === undefined), query);
  }
  t.is((await get(`${f.env.EXTERNAL_YGGDRASIL_URL}/sessionserver/session/minecraft/profile/${'0'.repeat(32)}`)).status, 204);
});

test('texture files are PNGs whose pixel hash is the URL hash, at the right sizes', async (t) => {
  const f = await fake(t);
  const cases: Array<[string, 'SKIN' | 'CAPE', number, number]> = [
    ['ClassicSteve', 'SKIN', 64, 64], ['LegacyOld', 'SKIN', 64, 32], ['HdPlayer', 'SKIN', 128, 128],
    ['SlimAlex', 'CAPE', 64, 32], ['CapeWearer', 'CAPE', 22, 17], ['gen_33', 'SKIN', 64, 64],
  ];
  for (const [name, kind, width, height] of cases) {
    const url = new URL((await officialTextures(f, name))[kind].url);
    t.is(url.host, f.env.TEXTURE_HOSTS, name);
    const res = await fetch(url);
    t.is(res.headers.get('content-type'), 'image/png', name);
    const png = Buffer.from(await res.arrayBuffer());
    t.is(await textureHash(png), url.pathname.split('/').at(-1)!, name);
    t.like(await sharp(png).metadata(), { format: 'png', width, height }, name);
  }
  const both = [await officialTextures(f, 'BothSources'), await officialTextures(f, 'BothSources')];
  t.is(both[0].SKIN.url, both[1].SKIN.url, 'deterministic');
  const externalProfile = (await get(`${f.env.EXTERNAL_YGGDRASIL_URL}/sessionserver/session/minecraft/profile/${f.players.byName('external', 'BothSources')!.uuid}`)).json;
  const externalSkin = JSON.parse(decode(externalProfile.properties[0].value)).textures.SKIN.url;
  t.true(externalSkin.startsWith(`${f.env.EXTERNAL_URL}/textures/`));
  t.not(new URL(externalSkin).pathname.split('/').pop(), new URL(both[0].SKIN.url).pathname.split('/').pop(), 'a different skin per source');
  t.is((await fetch(externalSkin)).headers.get('content-type'), 'image/png');
  t.is(f.calls()['external.texture'], 1);
});

test('trap textures: another host, a redirect off the allow-list, HTML, 3 MB', async (t) => {
  const f = await fake(t);
  const evil = new URL((await officialTextures(f, 'EvilTexture')).SKIN.url);
  t.is(evil.hostname, 'localhost');
  t.not(evil.host, f.env.TEXTURE_HOSTS);
  const redirect = (await officialTextures(f, 'RedirectSkin')).SKIN.url;
  t.is(new URL(redirect).host, f.env.TEXTURE_HOSTS);
  const hop = await get(redirect);
  t.is(hop.status, 302);
  t.is(new URL(hop.headers.get('location')!).hostname, 'localhost');
  t.false('evil' in f.calls(), 'nothing fetched the evil host yet');
  t.is((await get(evil.href)).status, 200);
  t.is(f.calls().evil, 1, 'the evil host counts its visitors');

  const html = await get((await officialTextures(f, 'NotPng')).SKIN.url);
  t.is(html.status, 200);
  t.regex(html.headers.get('content-type')!, /^text\/html/);
  const huge = await fetch((await officialTextures(f, 'HugeSkin')).SKIN.url);
  t.is(huge.headers.get('content-length'), null, 'streamed: the size is only known by counting');
  t.is((await huge.arrayBuffer()).byteLength, 3 * 1024 * 1024 + 8);
});

test('generated players exist in both sources with stable UUIDs and skins', async (t) => {
  const f = await fake(t);
  const gen = await get(`${f.env.OFFICIAL_SERVICES_URL}/minecraft/profile/lookup/name/GEN_0042`);
  t.deepEqual(gen.json, { id: f.players.byName('official', 'gen_0042')!.uuid, name: 'gen_0042' });
  t.is((await get(`${f.env.OFFICIAL_SERVICES_URL}/minecraft/profile/lookup/name/gen_1234567`)).status, 404, 'at most 6 digits');
  const textures = await officialTextures(f, 'gen_0042');
  t.is(textures.CAPE !== undefined, 42 % 3 === 0);
  t.not(textures.SKIN.url, (await officialTextures(f, 'gen_43')).SKIN.url);
  t.like((await officialTextures(f, 'gen_43')).SKIN, { metadata: { model: 'slim' } });

  const ext = await postJson(`${f.env.EXTERNAL_YGGDRASIL_URL}/api/profiles/minecraft`, ['ext_9']);
  const profile = await get(`${f.env.EXTERNAL_YGGDRASIL_URL}/sessionserver/session/minecraft/profile/${ext.json[0].id}`);
  t.is(profile.json.name, 'ext_9');
});

test('GeyserMC Global API: gamertag <-> XUID, the converted skin on the Mojang texture host, {} for the unknown, 400 and down', async (t) => {
  const f = await fake(t);
  const api = f.env.BEDROCK_API_URL;
  const { xuid } = (await get(`${api}/v2/xbox/xuid/pocket%20ranger`)).json;
  t.is(xuid, 2535432196048835);
  t.deepEqual((await get(`${api}/v2/xbox/gamertag/${xuid}`)).json, { gamertag: 'Pocket Ranger' });
  const skin = (await get(`${api}/v2/skin/${xuid}`)).json;
  t.deepEqual(Object.keys(skin).sort(), ['hash', 'is_steve', 'signature', 'texture_id', 'value']);
  t.false(skin.is_steve);
  t.regex(skin.texture_id, /^[0-9a-f]{64}$/);
  const png = await get(`${f.env.BEDROCK_TEXTURE_URL}/${skin.texture_id}`);
  t.is(png.status, 200);
  t.is(JSON.parse(decode(skin.value)).textures.SKIN.url, `${f.env.BEDROCK_TEXTURE_URL}/${skin.texture_id}`);
  const never = (await get(`${api}/v2/xbox/xuid/NeverJoined`)).json.xuid;
  t.deepEqual((await get(`${api}/v2/skin/${never}`)).json, {}, 'a player who never joined has no skin');
  t.deepEqual((await get(`${api}/v2/xbox/xuid/Nobody`)).json, {});
  t.deepEqual((await get(`${api}/v2/xbox/gamertag/1`)).json, {});
  t.is((await get(`${api}/v2/skin/abc`)).status, 400);
  t.is((await get(`${api}/v2/xbox/xuid/${'a'.repeat(17)}`)).status, 400);
  f.control({ down: { bedrock: true } });
  t.is((await get(`${api}/v2/skin/${xuid}`)).status, 500);
  t.is((await get(`${f.env.OFFICIAL_SERVICES_URL}/minecraft/profile/lookup/name/Knight`)).status, 200, 'only that source is down');
});

test('misbehaving players: FailPlayer answers 500, HangPlayer hangs until close', async (t) => {
  const f = await fake(t);
  t.is((await get(`${f.env.OFFICIAL_SERVICES_URL}/minecraft/profile/lookup/name/FailPlayer`)).status, 500);
  t.is((await postJson(`${f.env.OFFICIAL_SERVICES_URL}/minecraft/profile/lookup/bulk/byname`, ['SlimAlex', 'failplayer'])).status, 500);
  const hanging = fetch(`${f.env.OFFICIAL_SERVICES_URL}/minecraft/profile/lookup/name/HangPlayer`);
  while ((f.calls()['official.name'] ?? 0) < 2) await new Promise((resolve) => setImmediate(resolve));
  await f.close();
  await t.throwsAsync(hanging, undefined, 'cut off by close, never answered');
});

test('calls, the request log and reset, in process and over HTTP', async (t) => {
  const f = await fake(t);
  await get(`${f.env.OFFICIAL_SERVICES_URL}/minecraft/profile/lookup/name/SlimAlex`);
  await get(`${f.env.OFFICIAL_SERVICES_URL}/minecraft/profile/lookup/name/Nobody`);
  await postJson(`${f.env.EXTERNAL_YGGDRASIL_URL}/api/profiles/minecraft`, ['ExternalOnly']);
  await get(`${f.env.EXTERNAL_URL}/api/announcements`);
  const unknown = await get(`${f.baseUrl}/no/such/path`);
  t.is(unknown.status, 404);
  const expected = { 'official.name': 2, 'external.bulk': 1, 'external.announcements': 1, unknown: 1 };
  t.deepEqual(f.calls(), expected);
  t.deepEqual((await get(`${f.baseUrl}/__calls`)).json, expected, 'control paths are not counted');
  t.deepEqual(f.requests()[2], { route: 'external.bulk', method: 'POST', path: '/external/api/yggdrasil/api/profiles/minecraft', body: '["ExternalOnly"]' });
  t.deepEqual((await get(`${f.baseUrl}/__requests`)).json, f.requests());

  f.resetCalls();
  t.deepEqual(f.calls(), {});
  await get(`${f.env.EXTERNAL_URL}/api/announcements`);
  t.is((await get(`${f.baseUrl}/__reset`, { method: 'POST' })).status, 204);
  t.deepEqual(f.calls(), {});
  t.deepEqual(f.requests(), []);
});

test('announcements carry the B9 fields and hostile HTML for a sanitiser', async (t) => {
  const f = await fake(t);
  const { json } = await get(`${f.env.EXTERNAL_URL}/api/announcements`);
  t.true(json.length >= 3 && json.length <= 4);
  for (const a of json) {
    t.deepEqual(Object.keys(a).sort(), ['color', 'content', 'expand', 'id', 'priority', 'severity', 'timestamp', 'title']);
    t.regex(a.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    t.true(['fatal', 'warning', 'info'].includes(a.severity));
  }
  const html = json.map((a: { content: string }) => a.content).join('\n');
  for (const bad of ['<script>', 'onclick=', 'onerror=', '<img src=x', 'javascript:', '<iframe']) t.true(html.includes(bad), bad);
  for (const good of ['<p>', '<ul>', '<li>', '<strong>', '<a href="https://']) t.true(html.includes(good), good);
});

const OAUTH = { clientId: 'test-client', clientSecret: 'test-secret', redirectUris: ['http://127.0.0.1:*/oauth/external/callback'] };
const REDIRECT = 'http://127.0.0.1:9/oauth/external/callback';
const ALL_SCOPES = 'User.Read Player.Read PremiumVerification.Read Yggdrasil.MinecraftToken.Create';

function authorizeUrl(f: FakeUpstream, scope: string, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams({ client_id: OAUTH.clientId, redirect_uri: REDIRECT, response_type: 'code', scope, state: 'st4te', ...extra });
  return `${f.env.EXTERNAL_URL}/oauth/authorize?${q}`;
}

/** Authorize (auto-approved) and exchange the code. */
async function login(f: FakeUpstream, scope: string) {
  const r = await get(authorizeUrl(f, scope));
  const back = new URL(r.headers.get('location')!);
  const code = back.searchParams.get('code')!;
  const tokens = await postForm(`${f.env.EXTERNAL_URL}/oauth/token`, {
    grant_type: 'authorization_code', client_id: OAUTH.clientId, client_secret: OAUTH.clientSecret, redirect_uri: REDIRECT, code,
  });
  return { back, code, tokens };
}

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

test('OAuth code flow: single-use code, scopes enforced with the 200 {code:403} quirk, refresh rotation', async (t) => {
  const f = await fake(t, { oauth: { ...OAUTH, autoApprove: true } });
  const { back, code, tokens } = await login(f, ALL_SCOPES);
  t.is(`${back.origin}${back.pathname}`, REDIRECT);
  t.is(back.searchParams.get('state'), 'st4te');
  t.is(tokens.status, 200);
  t.deepEqual(Object.keys(tokens.json).sort(), ['access_token', 'expires_in', 'refresh_token', 'token_type']);
  t.like(tokens.json, { token_type: 'Bearer', expires_in: 259200 });
  const again = await postForm(`${f.env.EXTERNAL_URL}/oauth/token`, {
    grant_type: 'authorization_code', client_id: OAUTH.clientId, client_secret: OAUTH.clientSecret, redirect_uri: REDIRECT, code,
  });
  t.is(again.status, 400);
  t.is(again.json.error, 'invalid_grant', 'a code works once');

  const access = tokens.json.access_token;
  t.like((await get(`${f.env.EXTERNAL_URL}/api/user`, bearer(access))).json, { uid: 1, nickname: 'demo', email: 'demo@example.org' });
  const players = (await get(`${f.env.EXTERNAL_URL}/api/players`, bearer(access))).json;
  t.deepEqual(players.map((p: { name: string }) => p.name), ['ExternalOnly', 'BothSources']);
  t.deepEqual(Object.keys(players[0]).sort(), ['last_modified', 'name', 'pid', 'tid_cape', 'tid_skin', 'uid']);
  const premium = await get(`${f.env.EXTERNAL_URL}/api/premium-verification`, bearer(access));
  t.deepEqual(premium.json, { code: 0, verified: true, uuid: f.players.byName('official', 'BothSources')!.uuid });

  const own = f.players.byName('external', 'BothSources')!;
  const game = await postJson(`${f.env.EXTERNAL_YGGDRASIL_URL}/authserver/oauth`, { uuid: own.uuid }, { 'content-type': 'application/json', ...bearer(access).headers });
  t.is(game.status, 200);
  t.deepEqual(game.json.selectedProfile, { id: own.uuid, name: 'BothSources' });
  t.is(game.json.availableProfiles.length, 2);
  t.regex(game.json.accessToken, /^[0-9a-f]{32}$/);
  const foreign = await postJson(`${f.env.EXTERNAL_YGGDRASIL_URL}/authserver/oauth`, { uuid: f.players.byName('external', 'Ext玩家')!.uuid }, { 'content-type': 'application/json', ...bearer(access).headers });
  t.is(foreign.status, 403);
  t.is(foreign.json.error, 'ForbiddenOperationException');

  for (const path of ['/api/user', '/api/players', '/api/premium-verification']) {
    const r = await get(`${f.env.EXTERNAL_URL}${path}`);
    t.is(r.status, 401, path);
    t.deepEqual(r.json, { message: 'Unauthenticated.' }, path);
  }
  const narrow = (await login(f, 'User.Read')).tokens.json.access_token;
  t.is((await get(`${f.env.EXTERNAL_URL}/api/user`, bearer(narrow))).status, 200);
  for (const path of ['/api/players', '/api/premium-verification']) {
    const r = await get(`${f.env.EXTERNAL_URL}${path}`, bearer(narrow));
    t.is(r.status, 200, path);
    t.deepEqual(r.json, { code: 403, message: 'Invalid scope(s) provided.' }, path);
  }

  const refreshed = await postForm(`${f.env.EXTERNAL_URL}/oauth/token`, {
    grant_type: 'refresh_token', client_id: OAUTH.clientId, client_secret: OAUTH.clientSecret, refresh_token: tokens.json.refresh_token,
  });
  t.is(refreshed.status, 200);
  t.not(refreshed.json.access_token, access);
  t.is((await get(`${f.env.EXTERNAL_URL}/api/user`, bearer(access))).status, 401, 'the old access token stops at once');
  t.is((await get(`${f.env.EXTERNAL_URL}/api/user`, bearer(refreshed.json.access_token))).status, 200);
  const reuse = await postForm(`${f.env.EXTERNAL_URL}/oauth/token`, {
    grant_type: 'refresh_token', client_id: OAUTH.clientId, client_secret: OAUTH.clientSecret, refresh_token: tokens.json.refresh_token,
  });
  t.is(reuse.json.error, 'invalid_grant', 'and so does the old refresh token');
  const wrongSecret = await postForm(`${f.env.EXTERNAL_URL}/oauth/token`, {
    grant_type: 'refresh_token', client_id: OAUTH.clientId, client_secret: 'nope', refresh_token: refreshed.json.refresh_token,
  });
  t.is(wrongSecret.json.error, 'invalid_client');
  t.like(f.calls(), { 'oauth.authorize': 2, 'api.user': 5, 'ygg.oauth': 2 });
});

test('OAuth validation and token expiry', async (t) => {
  const f = await fake(t, { oauth: { ...OAUTH, autoApprove: true, tokenTtlSeconds: 0 } });
  const badClient = await get(authorizeUrl(f, 'User.Read', { client_id: 'someone-else' }));
  t.is(badClient.status, 400);
  t.is(badClient.json.error, 'invalid_client');
  t.is((await get(authorizeUrl(f, 'User.Read', { redirect_uri: 'http://127.0.0.1:9/elsewhere' }))).status, 400);
  t.is((await get(authorizeUrl(f, 'User.Read', { redirect_uri: 'http://evil.example:9/oauth/external/callback' }))).status, 400);
  const badScope = await get(authorizeUrl(f, 'User.Read Yggdrasil.GameToken.Create'));
  t.is(new URL(badScope.headers.get('location')!).searchParams.get('error'), 'invalid_scope');

  const defaultScope = await get(authorizeUrl(f, ''));
  t.truthy(new URL(defaultScope.headers.get('location')!).searchParams.get('code'), 'an empty scope means User.Read');
  const { tokens } = await login(f, 'User.Read');
  t.is(tokens.json.expires_in, 0);
  t.is((await get(`${f.env.EXTERNAL_URL}/api/user`, bearer(tokens.json.access_token))).status, 401, 'expired on arrival');
});

test('OAuth consent page: choose a user, approve or deny', async (t) => {
  const f = await fake(t, { oauth: OAUTH });
  const page = await get(authorizeUrl(f, ALL_SCOPES));
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type')!, /text\/html/);
  for (const bit of ['Fake LittleSkin', '<select name="user">', 'id="approve"', 'id="deny"', 'Player.Read', 'Yggdrasil.MinecraftToken.Create']) t.true(page.text.includes(bit), bit);
  const request = /name="request" value="([^"]+)"/.exec(page.text)![1];

  const approve = await postForm(`${f.env.EXTERNAL_URL}/oauth/authorize`, { request, user: '2', decision: 'approve' });
  t.is(approve.status, 302);
  const back = new URL(approve.headers.get('location')!);
  t.is(back.searchParams.get('state'), 'st4te');
  const tokens = await postForm(`${f.env.EXTERNAL_URL}/oauth/token`, {
    grant_type: 'authorization_code', client_id: OAUTH.clientId, client_secret: OAUTH.clientSecret, redirect_uri: REDIRECT, code: back.searchParams.get('code')!,
  });
  const access = tokens.json.access_token;
  t.like((await get(`${f.env.EXTERNAL_URL}/api/user`, bearer(access))).json, { uid: 2, nickname: 'plain' });
  const premium = await get(`${f.env.EXTERNAL_URL}/api/premium-verification`, bearer(access));
  t.is(premium.status, 404);
  t.deepEqual(premium.json, { code: 0, verified: false });
  t.is((await postForm(`${f.env.EXTERNAL_URL}/oauth/authorize`, { request, user: '2', decision: 'approve' })).status, 400, 'a request is answered once');

  const second = /name="request" value="([^"]+)"/.exec((await get(authorizeUrl(f, 'User.Read'))).text)![1];
  const deny = await postForm(`${f.env.EXTERNAL_URL}/oauth/authorize`, { request: second, user: '1', decision: 'deny' });
  const denied = new URL(deny.headers.get('location')!);
  t.is(denied.searchParams.get('error'), 'access_denied');
  t.is(denied.searchParams.get('state'), 'st4te');
  t.is(denied.searchParams.get('code'), null);
});

test('control knobs: official budget gives 429 until reset, down gives 500 per source', async (t) => {
  const f = await fake(t);
  const name = `${f.env.OFFICIAL_SERVICES_URL}/minecraft/profile/lookup/name/SlimAlex`;
  f.control({ officialBudget: 2 });
  t.is((await get(name)).status, 200);
  t.is((await get(name)).status, 200);
  const limited = await get(name);
  t.is(limited.status, 429);
  t.is(limited.headers.get('retry-after'), '60');
  t.like(limited.json, { error: 'TooManyRequestsException', path: '/minecraft/profile/lookup/name/SlimAlex' });
  t.is((await get(`${f.env.OFFICIAL_API_URL}/users/profiles/minecraft/SlimAlex`)).status, 429, 'every official API host');
  t.is((await get(`${f.env.EXTERNAL_URL}/api/announcements`)).status, 200, 'the external source is unaffected');
  f.resetCalls();
  t.is((await get(name)).status, 200, 'reset gives the budget back');
  await get(`${f.baseUrl}/__control`, { method: 'POST', body: JSON.stringify({ officialBudget: null }) });
  for (let i = 0; i < 3; i++) t.is((await get(name)).status, 200);

  const control = await get(`${f.baseUrl}/__control`, { method: 'POST', body: JSON.stringify({ down: { official: true } }) });
  t.like(control.json, { down: { official: true, external: false } });
  t.is((await get(name)).status, 500);
  t.is((await get(`${f.env.OFFICIAL_SESSION_URL}/session/minecraft/profile/${'0'.repeat(32)}`)).status, 500);
  t.is((await get(`${f.env.EXTERNAL_YGGDRASIL_URL}/`)).status, 200);
  f.control({ down: { official: false, external: true } });
  t.is((await get(name)).status, 200);
  t.is((await get(`${f.env.EXTERNAL_YGGDRASIL_URL}/`)).status, 500);
  t.is((await get(`${f.env.EXTERNAL_URL}/api/announcements`)).status, 500);
  t.is((await get(`${f.baseUrl}/__control`, { method: 'POST', body: '[1]' })).status, 400);
});

test('control knob hang: the source stops answering until close', async (t) => {
  const f = await fake(t);
  f.control({ hang: { external: true } });
  t.is((await get(`${f.env.OFFICIAL_SERVICES_URL}/minecraft/profile/lookup/name/SlimAlex`)).status, 200);
  const hanging = fetch(`${f.env.EXTERNAL_URL}/api/announcements`);
  while (!f.calls()['external.announcements']) await new Promise((resolve) => setImmediate(resolve));
  await f.close();
  await t.throwsAsync(hanging);
});

test('control knob latency delays answers, and close cuts delayed requests off', async (t) => {
  const f = await fake(t, { latencyMs: 50 });
  const started = performance.now();
  t.is((await get(`${f.env.EXTERNAL_URL}/api/announcements`)).status, 200);
  t.true(performance.now() - started >= 45, 'answered no sooner than the latency');
  f.control({ latencyMs: 600_000 });
  const delayed = fetch(`${f.env.EXTERNAL_URL}/api/announcements`);
  while ((f.calls()['external.announcements'] ?? 0) < 2) await new Promise((resolve) => setImmediate(resolve));
  await f.close();
  await t.throwsAsync(delayed);
});
