// The demo players (scripts/fake-upstream/players.ts, skin-looks.ts) through the real service:
// the formats they stand for, a different drawing each, real HD detail, and renders that are
// drawings, not the test pattern. Renders are saved to test-artifacts/demo-players/.
import test from 'ava';
import sharp from 'sharp';
import { faceColor } from '../scripts/fake-upstream/skin-art.ts';
import { FACE_NAMES, PART_NAMES } from '../shared/skin-layout.ts';
import { decodePng, saveArtifact } from './helpers/png.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins({ RENDER_WORKERS: '1' });
});
test.after.always(async () => {
  await h?.stop();
});

const DEMO: Array<{ name: string; slim: boolean; skin: [number, number]; cape: [number, number] | null }> = [
  { name: 'Knight', slim: false, skin: [64, 64], cape: [64, 32] },
  { name: 'Robot', slim: false, skin: [64, 64], cape: null },
  { name: 'Astronaut', slim: false, skin: [64, 64], cape: null },
  { name: 'Ranger', slim: true, skin: [64, 64], cape: [64, 32] },
  { name: 'Wizard', slim: false, skin: [128, 128], cape: null },
  { name: 'Miner', slim: false, skin: [64, 32], cape: null },
];

const size = async (bytes: Buffer) => {
  const { width, height } = await sharp(bytes).metadata();
  return [width, height];
};

test('each demo player has its format: model, legacy, HD, cape', async (t) => {
  const hashes = new Set<string>();
  for (const demo of DEMO) {
    const { status, json } = await h.get(`/v1/player/${demo.name}`);
    t.is(status, 200, demo.name);
    t.like(json.data, { name: demo.name, source: 'official', has_skin: true, slim: demo.slim, has_cape: demo.cape !== null }, demo.name);
    hashes.add(json.data.skin_hash);
    t.deepEqual(await size((await h.get(`/v1/skin/${demo.name}`)).bytes), demo.skin, `${demo.name} skin`);
    if (demo.cape) t.deepEqual(await size((await h.get(`/v1/cape/${demo.name}`)).bytes), demo.cape, `${demo.name} cape`);
  }
  t.is(hashes.size, DEMO.length, 'a different drawing each');
});

test('the HD skin has detail finer than a 64-unit texel', async (t) => {
  const { data, width } = await decodePng((await h.get('/v1/skin/Wizard')).bytes);
  let uneven = 0;
  for (let y = 0; y < width; y += 2) {
    for (let x = 0; x < width; x += 2) {
      const at = (dx: number, dy: number) => data.readUInt32BE(((y + dy) * width + x + dx) * 4);
      if (at(0, 0) !== at(1, 0) || at(0, 0) !== at(0, 1) || at(0, 0) !== at(1, 1)) uneven += 1;
    }
  }
  t.true(uneven > 200, `${uneven} 2x2 blocks hold more than one colour`);
});

test('renders of the demo players are drawings, not the test pattern', async (t) => {
  const pattern = new Set(PART_NAMES.flatMap((part) => FACE_NAMES.flatMap((face) => [faceColor(part, 'inner', face), faceColor(part, 'outer', face)].map((c) => c.slice(0, 3).join()))));
  for (const { name } of DEMO) {
    const r = await h.get(`/v1/skin/${name}`);
    const skin = await decodePng(r.bytes);
    let patternTexels = 0;
    for (let i = 0; i < skin.data.length; i += 4) if (skin.data[i + 3] && pattern.has(`${skin.data[i]},${skin.data[i + 1]},${skin.data[i + 2]}`)) patternTexels += 1;
    t.is(patternTexels, 0, `${name} wears no test-pattern colour`);
    const render = await h.get(`/v1/render/${name}/200?yaw=25&pitch=10`);
    t.is(render.status, 200, name);
    saveArtifact('demo-players', name, render.bytes);
    const picture = await decodePng(render.bytes);
    const opaque = picture.data.filter((v, i) => i % 4 === 3 && v === 255).length;
    t.true(opaque > 200 * 200 * 0.1, `${name}: a figure is drawn`);
  }
});
