// `npm run gallery`: our own demo players (the fake upstream's, drawn by its skin art) rendered by
// the real service at several angles and in every pose, in one grid (a row per player, then a row
// of the first player in every pose the columns leave out, and a bust): docs/gallery.png, shown at
// the top of the README; and the first of them turning, docs/turntable.webp (GET /v1/turntable,
// 36 frames; --turntable '' skips it). Run it again whenever the look of renders changes.
// `npm run gallery -- [--out docs/gallery.png] [--size 128] [--players 6] [--bg f2f4f7] [--turntable docs/turntable.webp]`
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { startFakeUpstream } from './fake-upstream/server.ts';
import { PlayerCatalogue } from './fake-upstream/players.ts';
import { launch, ON_FREE_PORTS } from './launch.ts';
import { POSE_NAMES, POSES, type PoseName } from '../shared/skin-layout.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    out: { type: 'string', default: path.join(root, 'docs/gallery.png') },
    size: { type: 'string', default: '128' },
    players: { type: 'string', default: '6' },
    bg: { type: 'string', default: 'f2f4f7' },
    turntable: { type: 'string', default: path.join(root, 'docs/turntable.webp') },
  },
});
const size = Number(values.size);

interface View { yaw: number; pitch: number; pose: PoseName; equip?: 'elytra'; kind?: 'bust' }

/** The columns: one view each (the README lists them in this order). */
const VIEWS: View[] = [
  { yaw: 25, pitch: 12, pose: 'standing' },
  { yaw: -35, pitch: 10, pose: 'walking' },
  { yaw: 40, pitch: 10, pose: 'running' },
  { yaw: 20, pitch: 12, pose: 'crouching' },
  { yaw: -20, pitch: 8, pose: 'waving' },
  { yaw: 30, pitch: 18, pose: 'crossed-arms' },
  { yaw: -40, pitch: 15, pose: 'sitting' },
  { yaw: 155, pitch: 15, pose: 'standing' },
  { yaw: 145, pitch: 15, pose: 'standing', equip: 'elytra' },
];

// The fake's demo players: official ones wearing a drawn look (not the test pattern).
const players = new PlayerCatalogue().official
  .filter((p) => !p.behaviour && typeof p.skin === 'object' && p.skin?.look !== undefined)
  .slice(0, Number(values.players))
  .map((p) => p.name);

// The last row: every other pose, turned alternately left and right, a lying figure (one `turn`ed
// down to the ground) seen from higher up; then the bust.
const POSE_ROW: View[] = [
  ...POSE_NAMES.filter((pose) => !VIEWS.some((v) => v.pose === pose))
    .map((pose, i) => ({ yaw: i % 2 ? -30 : 30, pitch: POSES[pose].turn ? 25 : 12, pose })),
  { yaw: 20, pitch: 8, pose: 'standing', kind: 'bust' },
];

const fake = await startFakeUpstream();
const app = await launch({ ...ON_FREE_PORTS, SERVICES: 'skins', LOG_LEVEL: 'info', ACCESS_LOG: 'false', RENDER_WORKERS: '2', ...fake.env });
try {
  const rows = [...players.map((name) => ({ name, views: VIEWS })), { name: players[0], views: POSE_ROW }];
  const tiles = await Promise.all(rows.flatMap(({ name, views }, row) => views.map(async (view, column) => {
    const query = new URLSearchParams({ yaw: String(view.yaw), pitch: String(view.pitch), pose: view.pose, ...(view.equip ? { equip: view.equip } : {}), bg: values.bg! });
    const response = await fetch(`${app.urls.skins}/v1/${view.kind ?? 'render'}/${name}/${size}?${query}`);
    if (!response.ok) throw new Error(`${name} ${query}: HTTP ${response.status}`);
    return { input: Buffer.from(await response.arrayBuffer()), left: column * size, top: row * size };
  })));
  const columns = Math.max(...rows.map((r) => r.views.length));
  const png = await sharp({ create: { width: columns * size, height: rows.length * size, channels: 3, background: `#${values.bg}` } })
    .composite(tiles).png({ compressionLevel: 9 }).toBuffer();
  writeFileSync(values.out!, png);
  const names = (views: View[]) => views.map((v) => v.kind ?? v.equip ?? v.pose).join(', ');
  console.log(`${values.out}: ${players.join(', ')} x ${names(VIEWS)}; ${players[0]} ${names(POSE_ROW)} (${Math.round(png.length / 1024)} KB)`);
  if (values.turntable) {
    const query = new URLSearchParams({ frames: '36', fps: '12', pitch: '12', pose: 'walking', bg: values.bg! });
    const response = await fetch(`${app.urls.skins}/v1/turntable/${players[0]}/${size}?${query}`);
    if (!response.ok) throw new Error(`turntable of ${players[0]}: HTTP ${response.status}`);
    const webp = Buffer.from(await response.arrayBuffer());
    writeFileSync(values.turntable, webp);
    console.log(`${values.turntable}: ${players[0]} turning, ${query} (${Math.round(webp.length / 1024)} KB)`);
  }
} finally {
  await app.stop();
  await fake.close();
}
