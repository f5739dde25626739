// Reads one media file's displayed size without decoding it: image headers (sharp metadata
// when the header reader is unsure), video container headers for videos.
//
// The file reads are synchronous on purpose: a probe is a handful of tiny system calls, and
// each async call is a round trip through libuv's thread pool that costs more than the call
// itself (measured: ~78,000 files/s synchronous against ~16,000/s asynchronous). The scanner
// yields to the event loop every few milliseconds, so requests keep flowing during a rescan.
import fs, { constants } from 'node:fs';
import sharp from 'sharp';
import { fileSource } from './byte-source.ts';
import { formatOfContent, type MediaFormat } from './formats.ts';
import { isAnimated } from './animation.ts';
import { imageSizeFromHeader } from './image-size.ts';
import { applyExifOrientation } from './orientation.ts';
import { sniffContainer, SNIFF_BYTES } from './sniff.ts';
import type { Dimensions } from './types.ts';
import { videoDimensions } from './video-dimensions.ts';

/** Enough for JPEG EXIF blocks and PNG chunk runs ahead of the pixel data in nearly every file. */
const HEAD_BYTES = 64 * 1024;
const MAX_SIDE = 1_000_000;
/**
 * One buffer for every header read: the reads are synchronous, so no two probes share it at
 * once, and 64 KB allocated per file left the process tens of megabytes bigger after a scan.
 */
const scratch = Buffer.allocUnsafe(HEAD_BYTES);

export interface Probed extends Dimensions { bytes: number; mtimeMs: number; format: MediaFormat; animated: boolean }

/** The file's bytes are a supported format, but of the other media type than its name says. */
export class MismatchedContent extends Error {}

async function sharpSize(path: string): Promise<Dimensions> {
  const meta = await sharp(path).metadata();
  // autoOrient is the size after EXIF rotation; older sharp builds only report the tag.
  return meta.autoOrient ?? applyExifOrientation({ width: meta.width ?? 0, height: meta.pageHeight ?? meta.height ?? 0 }, meta.orientation);
}

interface Header { stat: fs.Stats; format: MediaFormat; size: Dimensions | undefined; animated: boolean }

/** Stat, real format and, when the header tells, the size; a size left undefined is for sharp to read. */
function readHeader(path: string, named: MediaFormat): Header {
  // O_NOFOLLOW: the caller resolved symlinks already; a link swapped in since is refused.
  const fd = fs.openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new Error('not a regular file');
    const wanted = Math.min(stat.size, named.type === 'image' ? HEAD_BYTES : SNIFF_BYTES);
    const head = scratch.subarray(0, fs.readSync(fd, scratch, 0, wanted, 0));
    const container = sniffContainer(head);
    if (!container) throw new Error('its content is not PNG, JPEG, GIF, WebP, AVIF, MP4/MOV or WebM');
    const format = formatOfContent(named, container);
    if (format.type !== named.type) throw new MismatchedContent(`its content is ${format.mime} but its name says ${named.type}`);
    if (format.type === 'video') {
      const size = videoDimensions(fileSource(fd, stat.size), container);
      if (!size) throw new Error('no video track with a picture size in the container header');
      return { stat, format, size, animated: isAnimated(head, container) };
    }
    return { stat, format, size: imageSizeFromHeader(head, container), animated: isAnimated(head, container) };
  } finally {
    fs.closeSync(fd);
  }
}

/** Size, real format and stat of a file; throws when they cannot be read or the size is implausible. */
export async function probeFile(path: string, named: MediaFormat): Promise<Probed> {
  const { stat, format, size: fromHeader, animated } = readHeader(path, named);
  const size = fromHeader ?? await sharpSize(path);
  if (!(size.width > 0 && size.height > 0 && size.width <= MAX_SIDE && size.height <= MAX_SIDE)) {
    throw new Error(`implausible size ${size.width}x${size.height}`);
  }
  return { width: size.width, height: size.height, bytes: stat.size, mtimeMs: Math.floor(stat.mtimeMs), format, animated };
}
