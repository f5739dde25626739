// Box walking for ISO base media files (MP4, MOV, AVIF): a box is a 32-bit size (1: a 64-bit
// size follows; 0: to the end of its parent) and a four-letter type, then its content.

export interface Box { type: string; start: number; end: number }

/** The box header at `offset`: its type, where its content starts and where it ends. */
export function boxAt(buf: Buffer, offset: number, limit: number): Box | undefined {
  if (offset + 8 > buf.length) return undefined;
  const size32 = buf.readUInt32BE(offset);
  const type = buf.toString('latin1', offset + 4, offset + 8);
  let start = offset + 8;
  let size = size32;
  if (size32 === 1) {
    if (offset + 16 > buf.length) return undefined;
    size = Number(buf.readBigUInt64BE(offset + 8));
    start = offset + 16;
  } else if (size32 === 0) {
    size = limit - offset;
  }
  if (size < start - offset) return undefined;
  return { type, start, end: offset + size };
}

/** The boxes inside `parent` that lie wholly within the buffer. */
export function* children(buf: Buffer, parent: { start: number; end: number }): Generator<Box> {
  const end = Math.min(parent.end, buf.length);
  for (let offset = parent.start; offset < end;) {
    const box = boxAt(buf, offset, end);
    if (!box || box.end > end) return;
    yield box;
    offset = box.end;
  }
}

export function child(buf: Buffer, parent: { start: number; end: number }, type: string): Box | undefined {
  for (const box of children(buf, parent)) if (box.type === type) return box;
  return undefined;
}

/** The children of a "full box" (one whose content starts with a version byte and 24 flag bits). */
export function fullBoxBody(box: Box): Box {
  return { type: box.type, start: box.start + 4, end: box.end };
}
