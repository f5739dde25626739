// Generated players over real HTTP: every one wears a skin of its own (and some a cape of their
// own), so benchmarks that use many players miss every cache keyed by texture.
import test from 'ava';
import { createVerify } from 'node:crypto';
import sharp from 'sharp';
import { partFaces } from '../shared/skin-layout.ts';
import { startFakeUpstream, type FakeUpstream } from '../scripts/fake-upstream/server.ts';
import { textureHash } from '../scripts/fake-upstream/texture-hash.ts';

const PLAYERS = 120;

async function texturesOf(f: FakeUpstream, source: 'official' | 'external', name: string): Promise<{ SKIN: { url: string }; CAPE?: { url: string } }> {
  const id = source === 'official'
    ? (await (await fetch(`${f.env.OFFICIAL_SERVICES_URL}/minecraft/profile/lookup/name/${name}`)).json()).id
    : (await (await fetch(`${f.env.EXTERNAL_YGGDRASIL_URL}/api/profiles/minecraft`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([name]),
    })).json())[0].id;
  const profileUrl = source === 'official'
    ? `${f.env.OFFICIAL_SESSION_URL}/session/minecraft/profile/${id}`
    : `${f.env.EXTERNAL_YGGDRASIL_URL}/sessionserver/session/minecraft/profile/${id}`;
  const profile = await (await fetch(profileUrl)).json();
  return JSON.parse(Buffer.from(profile.properties[0].value, 'base64').toString('utf8')).textures;
}

async function png(url: string): Promise<Buffer> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

/** The pixels of the body's inner front face, where a render shows the player's number. */
async function bodyFront(skin: Buffer): Promise<Buffer> {
  const r = partFaces('body', 'inner', false).front;
  return sharp(skin).ensureAlpha().extract({ left: r.x, top: r.y, width: r.w, height: r.h }).raw().toBuffer();
}

test(`${PLAYERS} generated players of each source have ${PLAYERS} distinct skins, drawn where a render shows them`, async (t) => {
  const f = await startFakeUpstream();
  t.teardown(() => f.close());
  for (const [source, prefix] of [['official', 'gen'], ['external', 'ext']] as const) {
    const hashes = new Set<string>();
    const capes = new Set<string>();
    const fronts: Buffer[] = [];
    for (let n = 0; n < PLAYERS; n++) {
      const textures = await texturesOf(f, source, `${prefix}_${n}`);
      const skin = await png(textures.SKIN.url);
      const hash = new URL(textures.SKIN.url).pathname.split('/').pop()!;
      t.is(await textureHash(skin), hash, 'the URL names the pixel hash of the file served');
      hashes.add(hash);
      fronts.push(await bodyFront(skin));
      t.is(textures.CAPE !== undefined, n % 3 === 0, `${prefix}_${n}: multiples of 3 wear a cape`);
      if (textures.CAPE) capes.add(await textureHash(await png(textures.CAPE.url)));
    }
    t.is(hashes.size, PLAYERS, `${source}: one texture hash per player`);
    t.is(capes.size, Math.ceil(PLAYERS / 3), `${source}: one cape per cape wearer`);
    t.is(new Set(fronts.map((b) => b.toString('hex'))).size, PLAYERS, `${source}: the body front differs between any two players`);
  }
  // Drawn from the name: a second fake serves the same file for the same player.
  const again = await startFakeUpstream();
  t.teardown(() => again.close());
  const first = await png((await texturesOf(f, 'official', 'gen_77')).SKIN.url);
  t.deepEqual(await png((await texturesOf(again, 'official', 'GEN_77')).SKIN.url), first);
});

test('prepareGenerated builds signed profiles ahead; the profile served later is that one, and verifies', async (t) => {
  const f = await startFakeUpstream();
  t.teardown(() => f.close());
  await f.prepareGenerated(5);
  const preparedBy = Date.now();
  const uuid = f.players.byName('official', 'gen_3')!.uuid;
  const fetchProfile = async () => (await fetch(`${f.env.OFFICIAL_SESSION_URL}/session/minecraft/profile/${uuid}?unsigned=false`)).json();
  const profile = await fetchProfile();
  const [textures] = profile.properties;
  t.true(JSON.parse(Buffer.from(textures.value, 'base64').toString('utf8')).timestamp <= preparedBy, 'built before it was asked for');
  t.true(createVerify('RSA-SHA1').update(textures.value).verify((await f.publicKeys()).official, textures.signature, 'base64'));
  t.deepEqual(await fetchProfile(), profile, 'the same answer again');
  t.is(f.calls()['official.profile'], 2);
});
