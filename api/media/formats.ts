// The formats the library indexes. A file's name decides whether it is considered at all (and
// whether it should be an image or a video); its first bytes decide what it really is (see
// sniff.ts), so a PNG named .jpg is served as image/png.
import type { MediaType } from './types.ts';

/** What a file's bytes say it is: 'mp4' is any ISO BMFF video (MP4, MOV), 'webm' any Matroska. */
export type Container = 'png' | 'jpg' | 'gif' | 'webp' | 'avif' | 'mp4' | 'webm';

export interface MediaFormat {
  container: Container;
  type: MediaType;
  mime: string;
  /** File name extensions of the format; the first is the one used when the name has another. */
  exts: readonly string[];
}

const FORMATS: readonly MediaFormat[] = [
  { container: 'png', type: 'image', mime: 'image/png', exts: ['png'] },
  { container: 'jpg', type: 'image', mime: 'image/jpeg', exts: ['jpg', 'jpeg'] },
  { container: 'webp', type: 'image', mime: 'image/webp', exts: ['webp'] },
  { container: 'gif', type: 'image', mime: 'image/gif', exts: ['gif'] },
  { container: 'avif', type: 'image', mime: 'image/avif', exts: ['avif'] },
  { container: 'mp4', type: 'video', mime: 'video/mp4', exts: ['mp4'] },
  { container: 'mp4', type: 'video', mime: 'video/quicktime', exts: ['mov'] },
  { container: 'webm', type: 'video', mime: 'video/webm', exts: ['webm'] },
];

/** Every content type the library serves (the `type` filter of GET / takes these). */
export const MIME_TYPES: readonly string[] = [...new Set(FORMATS.map((format) => format.mime))];

const BY_EXTENSION = new Map(FORMATS.flatMap((format) => format.exts.map((ext) => [ext, format] as const)));

/** Lower-case extension without the dot ("" when there is none). */
export function extensionOf(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return dot > 0 ? fileName.slice(dot + 1).toLowerCase() : '';
}

/** The format a file name claims, or undefined when the library does not index such names. */
export function formatOf(fileName: string): MediaFormat | undefined {
  return BY_EXTENSION.get(extensionOf(fileName));
}

/** The format of a file whose name claims `named` and whose bytes are `container`. */
export function formatOfContent(named: MediaFormat, container: Container): MediaFormat {
  return named.container === container ? named : FORMATS.find((format) => format.container === container)!;
}

/** The extension of a file's permanent address: its own when it fits the format, else the format's. */
export function addressExtension(format: MediaFormat, fileName: string): string {
  const ext = extensionOf(fileName);
  // The format's own string, so a million files share a few extension strings.
  return format.exts.find((known) => known === ext) ?? format.exts[0];
}
