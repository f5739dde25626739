// A texture's bytes for the page, packed. Every byte of a batch's CDP call costs in this thread,
// the browser process that relays it and the page that parses it, and a new skin is 16 KB of RGBA
// (22 KB of base64) while most skins use a few dozen to a few hundred colours: as a palette and
// one byte a texel (two past 256 colours) a 64x64 skin travels in 4-10 KB. Unpacked in the page by
// renderer/page/texels.js. Texels with alpha 0 may arrive as 0,0,0,0: no shader draws them.
import type { PageTexels } from './jobs.ts';

/** Past this many colours a palette no longer pays (two bytes a texel plus four a colour against four a texel). */
const MAX_COLOURS = 2048;
const SLOTS = MAX_COLOURS * 2;
const keys = new Uint32Array(SLOTS);
const slots = new Int32Array(SLOTS);
const palette = new Uint32Array(MAX_COLOURS);

/** RGBA texels as a palette and indices when they have at most MAX_COLOURS colours, else as they are. */
export function packTexels(rgba: Uint8Array): PageTexels {
  const raw = (): PageTexels => ({ base64: Buffer.from(rgba.buffer, rgba.byteOffset, rgba.byteLength).toString('base64'), palette: null });
  const count = rgba.byteLength >> 2;
  // Texels as 32-bit words need a 4-byte aligned view; a view posted from another thread keeps its offset.
  const aligned = rgba.byteOffset % 4 === 0 ? rgba : Uint8Array.from(rgba);
  const texels = new Uint32Array(aligned.buffer, aligned.byteOffset, count);
  // Colours more than a texel in four: no gain worth a pass over the hash table.
  if (count < 64) return raw();
  const indices = new Uint16Array(count);
  slots.fill(-1);
  let colours = 0;
  for (let i = 0; i < count; i += 1) {
    // Alpha is the high byte on a little-endian machine: a transparent texel is colour 0.
    const texel = texels[i] >>> 24 === 0 ? 0 : texels[i];
    let slot = Math.imul(texel, 0x9e3779b1) >>> 20 & (SLOTS - 1);
    while (slots[slot] !== -1 && keys[slot] !== texel) slot = (slot + 1) & (SLOTS - 1);
    if (slots[slot] === -1) {
      if (colours === MAX_COLOURS || colours * 4 >= count) return raw();
      keys[slot] = texel;
      slots[slot] = colours;
      palette[colours] = texel;
      colours += 1;
    }
    indices[i] = slots[slot];
  }
  const packed = colours <= 256 ? Buffer.from(Uint8Array.from(indices)) : Buffer.from(indices.buffer, 0, count * 2);
  return { base64: packed.toString('base64'), palette: Buffer.from(palette.buffer, 0, colours * 4).toString('base64') };
}
