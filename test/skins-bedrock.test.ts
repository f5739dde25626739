// Bedrock players (GeyserMC's Global API) through the real service and the fake upstream: `auto`
// sends a prefixed name or a Floodgate UUID to bedrock alone, `source=bedrock` takes gamertags,
// the images are the converted skin's, a player who never joined a Geyser server is not_found
// (never a default skin), and the answers are cached, negatively cached and served stale.
import test from 'ava';
import sharp from 'sharp';
import { BEDROCK_PLAYERS } from '../scripts/fake-upstream/bedrock.ts';
import { decodePng } from './helpers/png.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

// Serial, in order: the circuit test takes bedrock down and leaves its circuit open (the budget
// test after it has a service of its own).
let h: SkinsHarness;
test.before(async () => {
  // Profiles are stale as soon as stored, so each read asks the upstream (names stay fresh);
  // one call per name; the circuit opens after 3 faults in a row.
  h = await startSkins({ RENDER_WORKERS: '0', CACHE_TTL_PROFILE: '0', NAME_BATCH_WINDOW_MS: '0', UPSTREAM_CIRCUIT_FAILURES: '3', UPSTREAM_CIRCUIT_OPEN_MS: '600000' });
});
test.after.always(async () => {
  await h?.stop();
});

const player = (gamertag: string) => BEDROCK_PLAYERS.find((p) => p.gamertag === gamertag)!;
const floodgate = (xuid: number) => `00000000-0000-0000-${xuid.toString(16).padStart(16, '0').replace(/^(.{4})/, '$1-')}`;
const RANGER = player('Pocket Ranger');
const STEVE = player('BedrockSteve');
const NEVER = player('NeverJoined');

/** Requests since the last reset to routes other than the Global API and the texture host. */
const otherCalls = () => h.fake.requests().filter((r) => !r.route.startsWith('bedrock.') && r.route !== 'official.texture');
const bedrockCalls = (route: string) => h.fake.requests().filter((r) => r.route === `bedrock.${route}`).length;

test.serial('the Floodgate UUID of a XUID is new UUID(0, xuid)', (t) => {
  t.is(floodgate(RANGER.xuid), '00000000-0000-0000-0009-01f64f65c7c3');
});

test.serial('auto: a name with the prefix asks bedrock alone, and the record is the Floodgate one', async (t) => {
  h.fake.resetCalls();
  const r = await h.get('/v1/player/.Pocket_Ranger');
  t.is(r.status, 200);
  t.like(r.json.data, {
    name: '.Pocket_Ranger', source: 'bedrock', uuid_dashed: floodgate(RANGER.xuid), slim: true, model: 'slim', has_skin: true, default_skin: null, has_cape: false,
  });
  t.regex(r.json.data.skin_url, new RegExp(`/official/textures/texture/[0-9a-f]{64}$`));
  t.deepEqual(otherCalls(), [], 'neither Mojang nor the external source was asked');
  t.deepEqual(h.fake.requests().map((q) => q.path), [
    '/bedrock/v2/xbox/xuid/Pocket%20Ranger', `/bedrock/v2/skin/${RANGER.xuid}`, `/bedrock/v2/xbox/gamertag/${RANGER.xuid}`,
  ]);
  const uuid = await h.get('/v1/uuid/.pocket_ranger');
  t.like(uuid.json.data, { source: 'bedrock', dashed: floodgate(RANGER.xuid), cached: true });
});

test.serial('auto: a Floodgate UUID asks bedrock alone, dashed or not', async (t) => {
  h.fake.resetCalls();
  for (const id of [floodgate(STEVE.xuid), floodgate(STEVE.xuid).replaceAll('-', '')]) {
    const r = await h.get(`/v1/player/${id}`);
    t.is(r.status, 200, id);
    t.like(r.json.data, { name: '.BedrockSteve', source: 'bedrock', model: 'classic', slim: false });
  }
  t.deepEqual(otherCalls(), []);
  t.is(bedrockCalls('xuid'), 0, 'a UUID needs no name lookup');
});

test.serial('source=bedrock takes the gamertag with or without the prefix, spaces as `_` or as spaces', async (t) => {
  for (const name of ['BedrockSteve', '.bedrocksteve']) {
    const r = await h.get(`/v1/uuid/${name}?source=bedrock`);
    t.is(r.status, 200, name);
    t.like(r.json.data, { dashed: floodgate(STEVE.xuid), source: 'bedrock' }, name);
  }
  for (const name of ['Pocket%20Ranger', 'Pocket_Ranger']) {
    const r = await h.get(`/v1/player/${name}?source=bedrock`);
    t.is(r.status, 200, name);
    t.is(r.json.data.name, '.Pocket_Ranger', name);
  }
  const batch = await h.get('/v1/batch?names=.BedrockSteve,Knight,.Nobody');
  // The Global API does not spell a gamertag back: a name hit keeps the case it was first asked in.
  t.deepEqual(batch.json.data.found.map((f: { name: string; source: string }) => [f.name.toLowerCase(), f.source]).sort(), [['.bedrocksteve', 'bedrock'], ['knight', 'official']]);
  t.deepEqual(batch.json.data.missing, ['.Nobody']);
});

test.serial('name rules: the prefix and gamertag characters belong to bedrock alone', async (t) => {
  const cases: Array<[string, number, string]> = [
    ['/v1/player/.bad!name', 400, 'invalid_name'],
    ['/v1/player/._', 400, 'invalid_name'],
    ['/v1/player/.ABCDEFGHIJKLMNOPQ', 400, 'invalid_name'], // 17 after the prefix
    ['/v1/player/.Pocket_Ranger?source=official', 400, 'invalid_name'],
    ['/v1/player/.Pocket_Ranger?source=external', 400, 'invalid_name'],
    ['/v1/player/Pocket%20Ranger', 400, 'invalid_name'], // a space is no Java name, and auto asks bedrock only with the prefix
    ['/v1/player/Ext玩家?source=bedrock', 400, 'invalid_name'],
    ['/v1/player/Knight?source=nether', 400, 'bad_source'],
  ];
  for (const [path, status, code] of cases) {
    const r = await h.get(path);
    t.is(r.status, status, path);
    t.is(r.json.code, code, path);
  }
});

test.serial('a Java UUID asked of bedrock is not_found without a call', async (t) => {
  const knight = (await h.get('/v1/uuid/Knight')).json.data.id;
  h.fake.resetCalls();
  const r = await h.get(`/v1/player/${knight}?source=bedrock`);
  t.is(r.status, 404);
  t.is(r.json.code, 'not_found');
  t.deepEqual(h.fake.requests(), []);
});

test.serial('the images are the converted skin: the avatar is its face, the skin its file', async (t) => {
  const skin = await h.get(`/v1/skin/.BedrockSteve`);
  t.is(skin.status, 200);
  t.is(skin.headers.get('content-type'), 'image/png');
  const face = await decodePng(await sharp(skin.bytes).extract({ left: 8, top: 8, width: 8, height: 8 }).png().toBuffer());
  for (const name of ['.BedrockSteve', floodgate(STEVE.xuid)]) {
    const avatar = await h.get(`/v1/avatar/${name}/8?helm=0`);
    t.is(avatar.status, 200, name);
    const drawn = await decodePng(avatar.bytes);
    t.is(drawn.width, 8);
    t.deepEqual(drawn.data, face.data, `${name}: the avatar is the texture's face`);
  }
  const explicit = await h.get('/v1/avatar/BedrockSteve/8?helm=0&source=bedrock');
  t.deepEqual((await decodePng(explicit.bytes)).data, face.data);
});

test.serial('a player who never joined a Geyser server is not_found, by name, UUID and image, and that is cached', async (t) => {
  h.fake.resetCalls();
  for (const path of ['/v1/player/.NeverJoined', `/v1/player/${floodgate(NEVER.xuid)}`, '/v1/avatar/.NeverJoined/64', '/v1/skin/.NeverJoined', '/v1/player/.Ghost']) {
    const r = await h.get(path);
    t.is(r.status, 404, path);
    t.is(r.json.code, 'not_found', path);
  }
  const asked = { xuid: bedrockCalls('xuid'), skin: bedrockCalls('skin') };
  t.deepEqual(asked, { xuid: 2, skin: 1 }, 'one name lookup each, one skin lookup for the XUID');
  t.is(bedrockCalls('gamertag'), 0, 'no name is asked for a player without a skin');
  for (const path of ['/v1/player/.NeverJoined', `/v1/player/${floodgate(NEVER.xuid)}`, '/v1/player/.Ghost']) t.is((await h.get(path)).status, 404);
  t.deepEqual({ xuid: bedrockCalls('xuid'), skin: bedrockCalls('skin') }, asked, 'the answers "no such player" are cached');
  t.deepEqual(otherCalls(), []);
});

test.serial('bedrock down: the last good profile is served stale, then the circuit opens and /v1/status says so', async (t) => {
  t.is((await h.get('/v1/player/.BedrockSteve')).status, 200);
  h.fake.control({ down: { bedrock: true } });
  t.teardown(() => h.fake.control({ down: { bedrock: false } }));
  const stale = await h.get('/v1/player/.BedrockSteve');
  t.is(stale.status, 200);
  t.is(stale.headers.get('x-cache'), 'STALE');
  t.is(stale.json.data.source, 'bedrock');
  const avatar = await h.get('/v1/avatar/.BedrockSteve/8?helm=0');
  t.is(avatar.status, 200, 'an image of a stale profile is served');
  const uncached = await h.get('/v1/uuid/.NotYetAsked');
  t.is(uncached.status, 502, 'nothing stale to serve');
  t.is(uncached.json.code, 'upstream_error');
  for (let i = 0; i < 3; i += 1) await h.get(`/v1/uuid/.Unknown${i}`);
  const status = (await h.get('/v1/status')).json.data;
  t.is(status.sources.bedrock.circuit.state, 'open');
  t.true(status.sources.bedrock.errors > 0);
  t.is(status.sources.official.errors, 0, 'the other sources are untouched');
  h.fake.resetCalls();
  const refused = await h.get('/v1/uuid/.Another');
  t.is(refused.status, 502);
  t.is(refused.json.code, 'upstream_error');
  t.true(Number(refused.headers.get('retry-after')) >= 1);
  t.deepEqual(h.fake.requests(), [], 'an open circuit sends nothing');
  const sources = (await h.get('/v1/sources')).json.data.sources;
  t.deepEqual(sources.map((s: { id: string }) => s.id), ['official', 'external', 'bedrock']);
});

test.serial('the outgoing budgets hold for bedrock: past them upstream_busy with Retry-After and no call', async (t) => {
  const b = await startSkins({ RENDER_WORKERS: '0', NAME_BATCH_WINDOW_MS: '0', BEDROCK_NAMES_BUDGET: '3/600:3', BEDROCK_PROFILES_BUDGET: '2/600:2' });
  t.teardown(() => b.stop());
  const codes = [];
  for (let i = 0; i < 5; i += 1) codes.push((await b.get(`/v1/uuid/.Nobody${i}`)).json.code);
  t.deepEqual(codes, ['not_found', 'not_found', 'not_found', 'upstream_busy', 'upstream_busy']);
  t.is(b.fake.requests().filter((r) => r.route === 'bedrock.xuid').length, 3);
  // A profile costs two calls (skin, gamertag): the second player finds the budget spent.
  t.is((await b.get(`/v1/player/${floodgate(STEVE.xuid)}`)).status, 200);
  const busy = await b.get(`/v1/player/${floodgate(RANGER.xuid)}`);
  t.is(busy.status, 503);
  t.is(busy.json.code, 'upstream_busy');
  t.true(Number(busy.headers.get('retry-after')) >= 1);
  const status = (await b.get('/v1/status')).json.data;
  t.is(status.upstream_budgets['bedrock.names'].remaining, 0);
  t.true(status.sources.bedrock.throttled > 0);
});
