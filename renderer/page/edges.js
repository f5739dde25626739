// @ts-check
// Anti-aliasing of silhouettes after the frame is read back, on the CPU: MSAA doubled the cost of
// a render on SwiftShader (docs/benchmarks.md, "Render look"); this costs a few percent.
// Morphological AA on the coverage mask only (alpha above one half): a polygon edge that WebGL
// drew as a staircase of runs and one-pixel steps is taken as the line through the steps'
// midpoints, and each pixel along it is mixed with its neighbour across the edge by the area the
// line gives that neighbour. Colours inside the figure are never mixed with each other, so texels
// stay crisp; straight edges and corners (no step) stay as drawn.
// One pass over the pixels builds the mask, each row's transitions and the list of
// half-transparent pixels; edges are found from the transitions alone. Runs in the page (served
// as /edges.js) and in Node tests.

/**
 * Integral over the pixel column [a, a + 1] of the line that falls from 1/2 at `from` to 0 at
 * `from + length` (length < 0 falls towards lower positions): the share of that pixel the
 * reconstructed edge gives to the other side.
 * @param {number} a
 * @param {number} from
 * @param {number} length
 */
function area(a, from, length) {
  const lo = length > 0 ? from : from + length, hi = length > 0 ? from + length : from;
  const x0 = a > lo ? a : lo, x1 = a + 1 < hi ? a + 1 : hi;
  if (x1 <= x0) return 0;
  return 0.5 * (1 - ((x0 + x1) / 2 - from) / length) * (x1 - x0);
}

/** Reusable scratch space, grown as needed: the page smooths tile after tile. */
const space = { mask: new Uint8Array(0), marks: new Int32Array(0), partial: new Int32Array(0), rowStart: new Int32Array(0), open: new Int32Array(0), openTop: new Uint8Array(0), mixTo: new Int32Array(4096), mixFrom: new Int32Array(4096), mixShare: new Float32Array(4096), mixes: 0 };

/**
 * Pixel `to` takes `share` of pixel `from`'s colour.
 * @param {number} to
 * @param {number} from
 * @param {number} share
 */
function addMix(to, from, share) {
  if (space.mixes === space.mixTo.length) {
    /**
     * @template {Int32Array | Float32Array} T
     * @param {T} old
     * @returns {T}
     */
    const grow = (old) => { const next = new (/** @type {new (length: number) => T} */ (old.constructor))(old.length * 2); next.set(old); return next; };
    space.mixTo = grow(space.mixTo); space.mixFrom = grow(space.mixFrom); space.mixShare = grow(space.mixShare);
  }
  space.mixTo[space.mixes] = to; space.mixFrom[space.mixes] = from; space.mixShare[space.mixes] = share;
  space.mixes += 1;
}

/**
 * Whether pixel (u, v) is inside the figure (see run for the coordinates).
 * @param {Uint8Array} mask
 * @param {number} along
 * @param {number} across
 * @param {number} su
 * @param {number} sv
 * @param {number} u
 * @param {number} v
 */
function isIn(mask, along, across, su, sv, u, v) {
  return u >= 0 && u < along && v >= 0 && v < across && mask[u * su + v * sv] === 1;
}

/**
 * A step at the end of a run at position w: the edge goes on one line further out (the inside
 * wraps round: the out pixels near that end gain, 1) or one line further in (the in pixels near
 * it lose, -1); 0 for a corner or the picture's border.
 * @param {Uint8Array} mask
 * @param {number} along
 * @param {number} across
 * @param {number} su
 * @param {number} sv
 * @param {number} w
 * @param {number} inLine
 * @param {number} outLine
 * @param {number} away
 */
function step(mask, along, across, su, sv, w, inLine, outLine, away) {
  if (w < 0 || w >= along) return 0;
  if (isIn(mask, along, across, su, sv, w, outLine) && !isIn(mask, along, across, su, sv, w, outLine - away)) return 1;
  if (!isIn(mask, along, across, su, sv, w, inLine) && isIn(mask, along, across, su, sv, w, inLine + away)) return -1;
  return 0;
}

/**
 * One run of edge: positions [start, end) along it, between line `inLine` (inside) and
 * `outLine`; pixel (u, v) is `u * su + v * sv` (su = 1, sv = width for edges between rows;
 * swapped for edges between columns), u in [0, along), v in [0, across). Records its mixes.
 * @param {Uint8Array} mask
 * @param {number} along
 * @param {number} across
 * @param {number} su
 * @param {number} sv
 * @param {number} start
 * @param {number} end
 * @param {number} inLine
 * @param {number} outLine
 */
function run(mask, along, across, su, sv, start, end, inLine, outLine) {
  const away = inLine - outLine; // from the out line through the in line and beyond
  const first = step(mask, along, across, su, sv, start - 1, inLine, outLine, away);
  const last = step(mask, along, across, su, sv, end, inLine, outLine, away);
  if (first === 0 && last === 0) return;
  const length = first !== 0 && last !== 0 ? (end - start) / 2 : end - start;
  for (let w = start; w < end; w += 1) {
    const inPixel = w * su + inLine * sv, outPixel = w * su + outLine * sv;
    for (let side = 0; side < 2; side += 1) {
      const kind = side === 0 ? first : last;
      if (kind === 0) continue;
      const share = side === 0 ? area(w, start, length) : area(w, end, -length);
      if (share <= 0) continue;
      if (kind === 1) addMix(outPixel, inPixel, share);
      else addMix(inPixel, outPixel, share);
    }
  }
}

/**
 * Turns a premultiplied RGBA tile (rows top to bottom, as read back) into the PNG's pixels in
 * place: silhouettes smoothed, then straight colour, or everything over `bg` ([r, g, b]).
 * @param {Uint8Array | Uint8ClampedArray} data
 * @param {number} width
 * @param {number} height
 * @param {number[] | null} bg
 */
export function finishTile(data, width, height, bg) {
  const n = width * height;
  if (space.mask.length < n) {
    space.mask = new Uint8Array(n);
    space.marks = new Int32Array(n + height);
    space.partial = new Int32Array(n);
  }
  if (space.rowStart.length < height + 2) space.rowStart = new Int32Array(height + 2);
  if (space.open.length < width + 1) {
    space.open = new Int32Array(width + 1);
    space.openTop = new Uint8Array(width + 1);
  }
  const { mask, marks, rowStart, open, openTop, partial } = space;
  // One pass: the mask, per row the columns where it changes (a row starts outside), and the
  // half-transparent pixels (the only ones whose colour needs dividing by alpha). Alpha is the
  // high byte of each little-endian 32-bit pixel.
  const pixels = new Uint32Array(data.buffer, data.byteOffset, n);
  let count = 0, partials = 0;
  for (let y = 0, i = 0; y < height; y += 1) {
    rowStart[y] = count;
    let before = 0;
    for (let x = 0; x < width; x += 1, i += 1) {
      const v = pixels[i];
      const now = v >= 0x80000000 ? 1 : 0;
      mask[i] = now;
      if (now !== before) { marks[count] = x; count += 1; before = now; }
      if (v >= 0x01000000 && v < 0xff000000) { partial[partials] = i; partials += 1; }
    }
    if (before) { marks[count] = width; count += 1; }
  }
  rowStart[height] = count;
  space.mixes = 0;
  // Edges between rows y and y + 1: where exactly one of the two rows is inside; between two
  // change points both rows are constant, so each stretch is a whole run.
  for (let y = -1; y < height; y += 1) {
    let a = y >= 0 ? rowStart[y] : 0, aEnd = y >= 0 ? rowStart[y + 1] : 0;
    let b = y + 1 < height ? rowStart[y + 1] : 0, bEnd = y + 1 < height ? rowStart[y + 2] : 0;
    let upper = 0, lower = 0, at = 0;
    while (a < aEnd || b < bEnd) {
      const next = Math.min(a < aEnd ? marks[a] : width, b < bEnd ? marks[b] : width);
      if (upper !== lower && y >= 0 && y + 1 < height) run(mask, width, height, 1, width, at, next, upper ? y : y + 1, upper ? y + 1 : y);
      while (a < aEnd && marks[a] === next) { upper ^= 1; a += 1; }
      while (b < bEnd && marks[b] === next) { lower ^= 1; b += 1; }
      at = next;
    }
  }
  // Edges between columns x - 1 and x: a change at x in consecutive rows with the same side
  // inside is one run down the picture. The runs open after row y - 1 are its changes.
  /**
   * @param {number} x
   * @param {number} endRow
   */
  const close = (x, endRow) => {
    if (x > 0 && x < width) run(mask, height, width, width, 1, open[x], endRow, openTop[x] ? x : x - 1, openTop[x] ? x - 1 : x);
  };
  for (let y = 0; y <= height; y += 1) {
    let p = y > 0 ? rowStart[y - 1] : 0;
    const pEnd = y > 0 ? rowStart[y] : 0;
    let c = y < height ? rowStart[y] : 0;
    const cEnd = y < height ? rowStart[y + 1] : 0;
    while (p < pEnd || c < cEnd) {
      const px = p < pEnd ? marks[p] : Infinity, cx = c < cEnd ? marks[c] : Infinity;
      const x = Math.min(px, cx);
      const rightInside = cx === x && x < width ? mask[y * width + x] : 0;
      const goesOn = px === x && cx === x && openTop[x] === rightInside;
      if (px === x && !goesOn) close(x, y);
      if (cx === x && !goesOn) { open[x] = y; openTop[x] = rightInside; }
      if (px === x) p += 1;
      if (cx === x) c += 1;
    }
  }

  // Every mix reads the pixels as drawn, then all are written.
  const { mixTo, mixFrom, mixShare, mixes } = space;
  const mixed = new Uint8ClampedArray(mixes * 4);
  for (let m = 0; m < mixes; m += 1) {
    const to = mixTo[m] * 4, from = mixFrom[m] * 4, share = mixShare[m];
    for (let c = 0; c < 4; c += 1) mixed[m * 4 + c] = data[to + c] * (1 - share) + data[from + c] * share + 0.5;
  }
  for (let m = 0; m < mixes; m += 1) for (let c = 0; c < 4; c += 1) data[mixTo[m] * 4 + c] = mixed[m * 4 + c];

  if (bg) {
    const under = (255 << 24 | bg[2] << 16 | bg[1] << 8 | bg[0]) >>> 0;
    for (let i = 0; i < n; i += 1) {
      const a = pixels[i] >>> 24;
      if (a === 0) pixels[i] = under;
      else if (a !== 255) over(data, i * 4, bg);
    }
    return;
  }
  // Straight colour for the half-transparent pixels: each once, mixed ones after their mix.
  for (let m = 0; m < mixes; m += 1) mask[mixTo[m]] |= 2;
  for (let k = 0; k < partials; k += 1) if ((mask[partial[k]] & 2) === 0) straight(data, partial[k] * 4);
  for (let m = 0; m < mixes; m += 1) {
    if ((mask[mixTo[m]] & 2) === 0) continue;
    mask[mixTo[m]] &= 1;
    straight(data, mixTo[m] * 4);
  }
}

/**
 * Premultiplied to straight colour, one pixel at byte offset i.
 * @param {Uint8Array | Uint8ClampedArray} data
 * @param {number} i
 */
function straight(data, i) {
  const a = data[i + 3];
  if (a === 0 || a === 255) return;
  const k = 255 / a;
  for (let c = 0; c < 3; c += 1) data[i + c] = Math.min(255, Math.round(data[i + c] * k));
}

/**
 * A premultiplied pixel over an opaque background colour.
 * @param {Uint8Array | Uint8ClampedArray} data
 * @param {number} i
 * @param {number[]} bg
 */
function over(data, i, bg) {
  const rest = 1 - data[i + 3] / 255;
  for (let c = 0; c < 3; c += 1) data[i + c] = Math.min(255, Math.round(data[i + c] + bg[c] * rest));
  data[i + 3] = 255;
}
