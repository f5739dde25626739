// Displayed size of a video from its container header, without decoding a frame.
import type { ByteSource } from './byte-source.ts';
import { mp4Dimensions } from './mp4-boxes.ts';
import type { Dimensions } from './types.ts';
import { webmDimensions } from './webm-ebml.ts';

export function videoDimensions(source: ByteSource, ext: string): Dimensions | undefined {
  return ext === 'webm' ? webmDimensions(source) : mp4Dimensions(source);
}
