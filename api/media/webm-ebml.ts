// Displayed size of the video track of a WebM/Matroska file, read from the EBML elements
// Segment > Tracks > TrackEntry > Video: PixelWidth/PixelHeight less any PixelCrop, shown at
// DisplayWidth/DisplayHeight when the file says so (a 640x360 picture shown as 9:16 is
// portrait). Clusters (the media data) follow Tracks in every muxer we know, so the walk stops
// long before the bulk of the file.
import type { ByteSource } from './byte-source.ts';
import type { Dimensions } from './types.ts';

const ID = {
  ebml: 0x1a45dfa3,
  segment: 0x18538067,
  tracks: 0x1654ae6b,
  trackEntry: 0xae,
  trackType: 0x83,
  video: 0xe0,
  pixelWidth: 0xb0,
  pixelHeight: 0xba,
  pixelCropBottom: 0x54aa,
  pixelCropTop: 0x54bb,
  pixelCropLeft: 0x54cc,
  pixelCropRight: 0x54dd,
  displayWidth: 0x54b0,
  displayHeight: 0x54ba,
  displayUnit: 0x54b2,
  cluster: 0x1f43b675,
} as const;

const VIDEO_TRACK = 1;
/** DisplayUnit values: 0 pixels; 1 cm, 2 inches and 3 aspect ratio give a shape only; 4 unknown. */
const UNIT_PIXELS = 0;
const UNIT_UNKNOWN = 4;
const MAX_TRACKS_BYTES = 4 * 1024 * 1024;
const MAX_SEGMENT_CHILDREN = 1000;

interface Element { id: number; start: number; end: number; unknownSize: boolean }

/** Length in bytes of the variable-size integer starting with `first` (0 when invalid). */
function vintLength(first: number): number {
  for (let length = 1; length <= 8; length++) if (first & (0x80 >> (length - 1))) return length;
  return 0;
}

/** The element header at `offset`; IDs keep their marker bit, sizes drop it. */
function elementAt(buf: Buffer, offset: number): Element | undefined {
  const idLength = vintLength(buf[offset] ?? 0);
  if (idLength === 0 || idLength > 4 || offset + idLength >= buf.length) return undefined;
  const id = buf.readUIntBE(offset, idLength);
  const sizeAt = offset + idLength;
  const sizeLength = vintLength(buf[sizeAt]);
  if (sizeLength === 0 || sizeAt + sizeLength > buf.length) return undefined;
  let size = buf[sizeAt] & (0xff >> sizeLength);
  let allOnes = size === 0xff >> sizeLength;
  for (let i = 1; i < sizeLength; i++) {
    size = size * 256 + buf[sizeAt + i];
    allOnes &&= buf[sizeAt + i] === 0xff;
  }
  const start = sizeAt + sizeLength;
  return { id, start, end: allOnes ? Infinity : start + size, unknownSize: allOnes };
}

function* elements(buf: Buffer, start: number, end: number): Generator<Element> {
  for (let offset = start; offset < end;) {
    const element = elementAt(buf, offset);
    if (!element || element.unknownSize || element.end > end) return;
    yield element;
    offset = element.end;
  }
}

function uintOf(buf: Buffer, element: Element): number {
  const length = element.end - element.start;
  return length >= 1 && length <= 6 ? buf.readUIntBE(element.start, length) : 0;
}

/** The size a player shows for one Video element. */
function displayedSize(buf: Buffer, video: Element): Dimensions {
  const v = new Map<number, number>();
  for (const field of elements(buf, video.start, video.end)) v.set(field.id, uintOf(buf, field));
  const crop = (id: number) => v.get(id) ?? 0;
  const width = (v.get(ID.pixelWidth) ?? 0) - crop(ID.pixelCropLeft) - crop(ID.pixelCropRight);
  const height = (v.get(ID.pixelHeight) ?? 0) - crop(ID.pixelCropTop) - crop(ID.pixelCropBottom);
  const displayWidth = v.get(ID.displayWidth) ?? 0;
  const displayHeight = v.get(ID.displayHeight) ?? 0;
  const unit = v.get(ID.displayUnit) ?? UNIT_PIXELS;
  if (!(displayWidth > 0 && displayHeight > 0) || unit === UNIT_UNKNOWN || !(width > 0 && height > 0)) return { width, height };
  if (unit === UNIT_PIXELS) return { width: displayWidth, height: displayHeight };
  // Only a shape: keep the picture's height and stretch its width to that shape, as players do.
  return { width: Math.round((height * displayWidth) / displayHeight), height };
}

function trackSize(tracks: Buffer): Dimensions | undefined {
  let fallback: Dimensions | undefined;
  for (const entry of elements(tracks, 0, tracks.length)) {
    if (entry.id !== ID.trackEntry) continue;
    let type = 0;
    let size: Dimensions | undefined;
    for (const field of elements(tracks, entry.start, entry.end)) {
      if (field.id === ID.trackType) type = uintOf(tracks, field);
      if (field.id === ID.video) size = displayedSize(tracks, field);
    }
    if (size && size.width > 0 && size.height > 0) {
      if (type === VIDEO_TRACK) return size;
      fallback ??= size;
    }
  }
  return fallback;
}

export function webmDimensions(source: ByteSource): Dimensions | undefined {
  const readHeader = (offset: number) => elementAt(source.read(offset, 12), 0);
  const ebml = readHeader(0);
  if (!ebml || ebml.id !== ID.ebml || ebml.unknownSize) return undefined;
  const segment = readHeader(ebml.end);
  if (!segment || segment.id !== ID.segment) return undefined;
  const segmentStart = ebml.end + segment.start;
  const segmentEnd = Math.min(segmentStart + (segment.end - segment.start), source.size);
  let offset = segmentStart;
  for (let n = 0; n < MAX_SEGMENT_CHILDREN && offset < segmentEnd; n++) {
    const element = readHeader(offset);
    if (!element || element.unknownSize || element.id === ID.cluster) return undefined;
    if (element.id === ID.tracks) {
      const length = element.end - element.start;
      if (length > MAX_TRACKS_BYTES) return undefined;
      return trackSize(source.read(offset + element.start, length));
    }
    offset += element.end;
  }
  return undefined;
}
