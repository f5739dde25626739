// The file extensions the library indexes, with their media type and content type.
import type { MediaType } from './types.ts';

export interface MediaFormat { type: MediaType; mime: string }

const FORMATS: Record<string, MediaFormat> = {
  png: { type: 'image', mime: 'image/png' },
  jpg: { type: 'image', mime: 'image/jpeg' },
  jpeg: { type: 'image', mime: 'image/jpeg' },
  webp: { type: 'image', mime: 'image/webp' },
  gif: { type: 'image', mime: 'image/gif' },
  avif: { type: 'image', mime: 'image/avif' },
  mp4: { type: 'video', mime: 'video/mp4' },
  webm: { type: 'video', mime: 'video/webm' },
  mov: { type: 'video', mime: 'video/quicktime' },
};

/** Lower-case extension without the dot ("" when there is none). */
export function extensionOf(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return dot > 0 ? fileName.slice(dot + 1).toLowerCase() : '';
}

/** The format of a file name, or undefined when the library does not index it. */
export function formatOf(fileName: string): MediaFormat | undefined {
  return Object.hasOwn(FORMATS, extensionOf(fileName)) ? FORMATS[extensionOf(fileName)] : undefined;
}
