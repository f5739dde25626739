// Header-only video files with a known picture size: enough container structure for the
// indexer (and for ffprobe to report the size), no frames, so players will not play them. The
// sample library and the tests use them; real libraries hold real videos.

export interface TinyVideoOptions {
  width: number;
  height: number;
  /** MP4 only: the track matrix turns the picture by this much (phones filming upright use 90). */
  rotation?: 0 | 90 | 180 | 270;
  /** Filler bytes ahead of the track header (MP4: an mdat box, so moov sits at the end; WebM: a Void element). */
  padBytes?: number;
  /** MP4: an audio track (no picture size) before the video track. */
  audioFirst?: boolean;
  /** WebM: a Segment of unknown size, as live recorders write. */
  unknownSize?: boolean;
  /** WebM: DisplayWidth/DisplayHeight (and DisplayUnit: 0 pixels, 3 aspect ratio) besides the pixel size. */
  display?: { width: number; height: number; unit?: number };
}

function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, body]);
}

/** Big-endian fields of the given byte widths (negative values as two's complement). */
function fields(...entries: Array<[bytes: number, value: number]>): Buffer {
  const buf = Buffer.alloc(entries.reduce((sum, [bytes]) => sum + bytes, 0));
  let offset = 0;
  for (const [bytes, value] of entries) {
    // Node writes at most 6 bytes at once; wider fields here only hold small values.
    const width = Math.min(bytes, 6);
    if (value < 0) buf.writeIntBE(value, offset + bytes - width, width);
    else buf.writeUIntBE(value, offset + bytes - width, width);
    offset += bytes;
  }
  return buf;
}

const FIXED_ONE = 0x10000;
const ROTATIONS = { 0: [1, 0, 0, 1], 90: [0, 1, -1, 0], 180: [-1, 0, 0, -1], 270: [0, -1, 1, 0] } as const;

function matrix(rotation: 0 | 90 | 180 | 270): Buffer {
  const [a, b, c, d] = ROTATIONS[rotation];
  return fields([4, a * FIXED_ONE], [4, b * FIXED_ONE], [4, 0], [4, c * FIXED_ONE], [4, d * FIXED_ONE], [4, 0], [4, 0], [4, 0], [4, 0x40000000]);
}

function track(id: number, handler: 'vide' | 'soun', width: number, height: number, rotation: 0 | 90 | 180 | 270): Buffer {
  const tkhd = box('tkhd', fields([1, 0], [3, 3], [4, 0], [4, 0], [4, id], [4, 0], [4, 1000], [8, 0], [2, 0], [2, 0], [2, handler === 'soun' ? 0x0100 : 0], [2, 0]),
    matrix(rotation), fields([4, width * FIXED_ONE], [4, height * FIXED_ONE]));
  const mdhd = box('mdhd', fields([4, 0], [4, 0], [4, 0], [4, 1000], [4, 1000], [2, 0x55c4], [2, 0]));
  const hdlr = box('hdlr', fields([4, 0], [4, 0]), Buffer.from(handler, 'latin1'), Buffer.alloc(12), Buffer.from('skinfarm\0', 'latin1'));
  return box('trak', tkhd, box('mdia', mdhd, hdlr));
}

export function tinyMp4(options: TinyVideoOptions): Buffer {
  const { width, height, rotation = 0, padBytes = 0, audioFirst = false } = options;
  const ftyp = box('ftyp', Buffer.from('isom', 'latin1'), fields([4, 0x200]), Buffer.from('isomiso2mp41', 'latin1'));
  const mvhd = box('mvhd', fields([4, 0], [4, 0], [4, 0], [4, 1000], [4, 1000], [4, FIXED_ONE], [2, 0x0100], [10, 0]), matrix(0), Buffer.alloc(24), fields([4, 3]));
  const tracks = audioFirst ? [track(2, 'soun', 0, 0, 0), track(1, 'vide', width, height, rotation)] : [track(1, 'vide', width, height, rotation)];
  const mdat = padBytes > 0 ? [box('mdat', Buffer.alloc(padBytes))] : [];
  return Buffer.concat([ftyp, ...mdat, box('moov', mvhd, ...tracks)]);
}

/** An EBML size field: the shortest that fits, or the reserved all-ones "unknown". */
function ebmlSize(length: number | 'unknown'): Buffer {
  if (length === 'unknown') return Buffer.from([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
  for (let bytes = 1; bytes <= 6; bytes++) {
    if (length < 2 ** (7 * bytes) - 1) {
      const buf = Buffer.alloc(bytes);
      buf.writeUIntBE(length, 0, bytes);
      buf[0] |= 0x80 >> (bytes - 1);
      return buf;
    }
  }
  throw new RangeError('element too large');
}

function element(id: number, payload: Buffer | number | string, unknownSize = false): Buffer {
  const idBytes = Buffer.alloc(Math.ceil(id.toString(16).length / 2));
  idBytes.writeUIntBE(id, 0, idBytes.length);
  let body: Buffer;
  if (typeof payload === 'number') {
    body = Buffer.alloc(Math.max(1, Math.ceil(payload.toString(16).length / 2)));
    body.writeUIntBE(payload, 0, body.length);
  } else {
    body = typeof payload === 'string' ? Buffer.from(payload, 'latin1') : payload;
  }
  return Buffer.concat([idBytes, ebmlSize(unknownSize ? 'unknown' : body.length), body]);
}

export function tinyWebm(options: TinyVideoOptions): Buffer {
  const { width, height, padBytes = 0, unknownSize = false, display } = options;
  const displayFields = display ? [element(0x54b0, display.width), element(0x54ba, display.height), ...(display.unit === undefined ? [] : [element(0x54b2, display.unit)])] : [];
  const header = element(0x1a45dfa3, Buffer.concat([
    element(0x4286, 1), element(0x42f7, 1), element(0x42f2, 4), element(0x42f3, 8),
    element(0x4282, 'webm'), element(0x4287, 4), element(0x4285, 2),
  ]));
  const info = element(0x1549a966, Buffer.concat([element(0x2ad7b1, 1_000_000), element(0x4d80, 'skinfarm'), element(0x5741, 'skinfarm')]));
  const entry = element(0xae, Buffer.concat([
    element(0xd7, 1), element(0x73c5, 1), element(0x83, 1), element(0x86, 'V_VP8'),
    element(0xe0, Buffer.concat([element(0xb0, width), element(0xba, height), ...displayFields])),
  ]));
  const filler = padBytes > 0 ? [element(0xec, Buffer.alloc(padBytes))] : [];
  const segment = element(0x18538067, Buffer.concat([info, ...filler, element(0x1654ae6b, entry)]), unknownSize);
  return Buffer.concat([header, segment]);
}
