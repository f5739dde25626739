// Shapes shared by the media modules: one indexed file and one category.
import type { MediaFormat } from './formats.ts';

export type MediaType = 'image' | 'video';
/** Square files are their own class: they match no orientation filter (see docs/media.md). */
export type Orientation = 'landscape' | 'portrait' | 'square';

export interface Dimensions { width: number; height: number }

/**
 * One indexed file. A library holds hundreds of thousands, so an entry keeps only what a request
 * needs and shares the rest (alias, format and extension strings are shared between entries).
 */
export interface MediaFile {
  /** Stable address: hash of category, file name, size and mtime (a changed file gets a new id). */
  id: string;
  alias: string;
  /** File name inside the category directory. */
  name: string;
  /** Real path of a symlinked entry (checked to lie inside MEDIA_DIR); undefined for a plain file. */
  target: string | undefined;
  /** What the file's bytes are (not what its name says). */
  format: MediaFormat;
  /** Extension of the permanent address. */
  ext: string;
  width: number;
  height: number;
  orientation: Orientation;
  /** Videos, and images of more than one frame (see animation.ts). */
  animated: boolean;
  bytes: number;
  mtimeMs: number;
  /** The errno (EACCES, EIO...) while the server cannot read the file: it is then in no random bag. */
  unreadable: string | undefined;
  /** When the category first indexed this id (its own counter), the listing order; -1 until added. */
  seen: number;
  /** Positions in the category's random bags (see picker.ts); -1 outside them. */
  anySlot: number;
  orientationSlot: number;
}

export interface CategoryMeta { name: string; private: boolean }
