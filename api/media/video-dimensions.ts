// Displayed size of a video from its container header, without decoding a frame.
import type { ByteSource } from './byte-source.ts';
import type { Container } from './formats.ts';
import { mp4Dimensions } from './mp4-boxes.ts';
import type { Dimensions } from './types.ts';
import { webmDimensions } from './webm-ebml.ts';

export function videoDimensions(source: ByteSource, container: Container): Dimensions | undefined {
  return container === 'webm' ? webmDimensions(source) : mp4Dimensions(source);
}
