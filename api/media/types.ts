// Shapes shared by the media modules: one indexed file and one category.

export type MediaType = 'image' | 'video';
/** Square files are their own class: they match no orientation filter (see docs/media.md). */
export type Orientation = 'landscape' | 'portrait' | 'square';

export interface Dimensions { width: number; height: number }

export interface MediaFile {
  /** Stable address: hash of category, file name, size and mtime (a changed file gets a new id). */
  id: string;
  alias: string;
  /** File name inside the category directory. */
  name: string;
  /** Real path on disk, already checked to lie inside MEDIA_DIR. */
  path: string;
  ext: string;
  type: MediaType;
  mime: string;
  width: number;
  height: number;
  orientation: Orientation;
  bytes: number;
  mtimeMs: number;
}

export interface CategoryMeta { name: string; private: boolean }
