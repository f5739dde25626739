// Event-loop time of one HD upload's textures (no HTTP): normalizeSkin + normalizeCape of a
// 1024x1024 skin and a 1024x512 cape, as POST /v1/render runs them, measured by the event loop's
// own utilisation (active ms while they run), the first upload (threads start) apart from the
// median of the rest. `zeros`: the files (rows of zeros, 4 and 2 KB); `art`: a generated
// skin drawn at 16x and a cape scaled up (33 and 10 KB).
// `node scripts/bench/upload-decode.ts [zeros|art] [--rounds 30]`
import { deflateSync } from 'node:zlib';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { chunk, SIGNATURE } from '../../renderer/png-encode.ts';
import { normalizeCape, normalizeSkin } from '../../renderer/skin-normalize.ts';
import { drawCape, drawSkin } from '../fake-upstream/skin-art.ts';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { rounds: { type: 'string', default: '30' } } });
const kind = positionals[0] ?? 'zeros';

/** An RGBA PNG of transparent rows (filter 0), as small as a 1024 px file gets. */
function zeros(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  return Buffer.concat([SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc((width * 4 + 1) * height))), chunk('IEND', Buffer.alloc(0))]);
}

const [skin, cape] = kind === 'zeros'
  ? [zeros(1024, 1024), zeros(1024, 512)]
  : [await drawSkin({ scale: 16, seed: 3 }), await sharp(await drawCape({ seed: 3 })).resize(1024, 512, { kernel: 'nearest' }).png().toBuffer()];

/** Active event-loop ms while one upload's textures are read. */
async function upload(): Promise<number> {
  const before = performance.eventLoopUtilization();
  await Promise.all([normalizeSkin(skin), normalizeCape(cape)]);
  // Let the loop go idle, so the interval ends with what the upload cost.
  await new Promise((resolve) => setTimeout(resolve, 20));
  return performance.eventLoopUtilization(before).active;
}

await new Promise((resolve) => setTimeout(resolve, 50));
const first = await upload();
const rest: number[] = [];
for (let i = 0; i < Number(values.rounds); i += 1) rest.push(await upload());
rest.sort((a, b) => a - b);
console.log(JSON.stringify({ kind, bytes: [skin.length, cape.length], firstMs: +first.toFixed(1), medianMs: +rest[rest.length >> 1].toFixed(1), maxMs: +rest.at(-1)!.toFixed(1) }));
process.exit(0);
