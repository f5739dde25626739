// @ts-check
// Unpacks a texture's texels as renderer/texel-pack.ts packed them (RGBA, or a palette and one or
// two bytes a texel) into the texture's RGBA bytes. Runs in the page (served as /texels.js) and in
// Node tests.
/** @import { PageTexels } from '../jobs.ts' */

/**
 * Base64 into `into`: natively from Chromium 140 (a system Chromium may be older) and Node 25.
 * @param {string} base64
 * @param {Uint8Array & { setFromBase64?: (base64: string) => void }} into (the method is not in TypeScript's ES2024 library)
 */
function decode(base64, into) {
  if (into.setFromBase64) into.setFromBase64(base64);
  else into.set(Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)));
  return into;
}

/**
 * Bytes a base64 text decodes to.
 * @param {string} base64
 */
function decodedLength(base64) {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}

/**
 * Writes the texels into `into` (width x height x 4 bytes, 4-byte aligned).
 * @param {PageTexels} texels
 * @param {Uint8Array} into
 */
export function unpackTexels(texels, into) {
  if (texels.palette === null) return decode(texels.base64, into);
  const colours = new Uint32Array(decode(texels.palette, new Uint8Array(decodedLength(texels.palette))).buffer);
  const count = into.byteLength >> 2;
  const bytes = decode(texels.base64, new Uint8Array(decodedLength(texels.base64)));
  // Two bytes an index past 256 colours, little-endian as the packer wrote them (so is every machine Chromium runs on).
  const indices = colours.length > 256 ? new Uint16Array(bytes.buffer, 0, count) : bytes;
  const out = new Uint32Array(into.buffer, into.byteOffset, count);
  for (let i = 0; i < count; i += 1) out[i] = colours[indices[i]];
  return into;
}
