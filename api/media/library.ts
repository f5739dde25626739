// The in-memory index: categories, each with a random bag per media type and orientation, and
// every file by its permanent id. The scanner and watcher write to it; requests only read.
// What the server cannot read stays known (so its address answers a failure, not "no such
// file") but out of the picks and the counts: files in a bag of their own, categories as faults.
import path from 'node:path';
import type { OrientationFilter } from './orientation.ts';
import { RandomBag, type Pool } from './picker.ts';
import type { CategoryMeta, MediaFile, MediaType } from './types.ts';

/**
 * 'any' holds every readable file of a type; a file is in one orientation bag at most, so they
 * share a slot; an unreadable file is in 'unreadable' alone, which reuses the 'any' slot.
 */
interface Bags {
  any: RandomBag<'anySlot', MediaFile>;
  landscape: RandomBag<'orientationSlot', MediaFile>;
  portrait: RandomBag<'orientationSlot', MediaFile>;
  unreadable: RandomBag<'anySlot', MediaFile>;
}

export interface CategoryCounts { files: number; images: number; videos: number; landscape: number; portrait: number; square: number }

export class Category {
  readonly alias: string;
  meta: CategoryMeta;
  /** Real directory (inside MEDIA_DIR). */
  dir: string;
  /** False until the scanner has read every file once: requests then hear 503, not a partial pick. */
  indexed = false;
  /** Files by name inside the category directory. */
  readonly files = new Map<string, MediaFile>();
  /** One bag per media type and orientation filter ('any' holds every file of the type). */
  private readonly bags: Record<MediaType, Bags>;
  /** The `seen` of the next new file: later files list after earlier ones, so pages stay put. */
  private nextSeen = 0;
  /** listing()'s answer until the files change. */
  private listed: MediaFile[] | undefined;

  constructor(alias: string, meta: CategoryMeta, dir: string) {
    this.alias = alias;
    this.meta = meta;
    this.dir = dir;
    const bags = (): Bags => ({ any: new RandomBag('anySlot'), landscape: new RandomBag('orientationSlot'), portrait: new RandomBag('orientationSlot'), unreadable: new RandomBag('anySlot') });
    this.bags = { image: bags(), video: bags() };
  }

  add(file: MediaFile): void {
    if (file.seen < 0) file.seen = this.nextSeen++;
    this.listed = undefined;
    this.files.set(file.name, file);
    const bags = this.bags[file.format.type];
    if (file.unreadable) return bags.unreadable.add(file);
    bags.any.add(file);
    // Square files are in no orientation bag.
    if (file.orientation !== 'square') bags[file.orientation].add(file);
  }

  delete(file: MediaFile): void {
    this.listed = undefined;
    this.files.delete(file.name);
    const bags = this.bags[file.format.type];
    bags.any.delete(file);
    bags.unreadable.delete(file);
    if (file.orientation !== 'square') bags[file.orientation].delete(file);
  }

  pick(type: MediaType, orientation?: OrientationFilter): MediaFile | undefined {
    return this.bags[type][orientation ?? 'any'].pick();
  }

  /** The readable files of a type (and orientation), for picks that need more than one at random. */
  pool(type: MediaType, orientation?: OrientationFilter): Pool<MediaFile> {
    return this.bags[type][orientation ?? 'any'];
  }

  /**
   * The readable files in the order the category first saw them (GET /categories/{alias}/files):
   * a new file comes last, so pages already read keep their files. Rebuilt after a change, in one
   * pass: the map is nearly in that order already (only a file read again moves in it).
   */
  listing(): readonly MediaFile[] {
    this.listed ??= [...this.files.values()].filter((file) => !file.unreadable).sort((a, b) => a.seen - b.seen);
    return this.listed;
  }

  /** Files of the type that the server cannot read (counted nowhere else). */
  unreadable(type: MediaType): number {
    return this.bags[type].unreadable.size;
  }

  counts(): CategoryCounts {
    const { image, video } = this.bags;
    const images = image.any.size;
    const videos = video.any.size;
    const landscape = image.landscape.size + video.landscape.size;
    const portrait = image.portrait.size + video.portrait.size;
    return { files: images + videos, images, videos, landscape, portrait, square: images + videos - landscape - portrait };
  }
}

export class Library {
  /** True while the first scan after start runs: what is not indexed yet may still come. */
  indexing = false;
  private readonly byAlias = new Map<string, Category>();
  private readonly byId = new Map<string, MediaFile>();
  /** Category directories (or their category.json) the server cannot read, with the errno. */
  private readonly faults = new Map<string, string>();

  category(alias: string): Category | undefined {
    return this.byAlias.get(alias);
  }

  /** Categories ready to serve: read whole at least once, and readable now. */
  categories(): Category[] {
    return [...this.byAlias.values()].filter((category) => category.indexed && !this.faults.has(category.alias));
  }

  /** The errno that keeps the category's directory or category.json from being read; undefined while readable. */
  fault(alias: string): string | undefined {
    return this.faults.get(alias);
  }

  /** A category that cannot be read: left out of listings and answered as a failure, its entries kept. */
  setFault(alias: string, code: string): void {
    this.faults.set(alias, code);
  }

  clearFault(alias: string): void {
    this.faults.delete(alias);
  }

  /** What cannot be served: unreadable files in readable categories, and unreadable categories. */
  unreadableCounts(): { files: number; categories: number } {
    let files = 0;
    for (const category of this.byAlias.values()) if (!this.faults.has(category.alias)) files += category.unreadable('image') + category.unreadable('video');
    return { files, categories: this.faults.size };
  }

  file(id: string): MediaFile | undefined {
    return this.byId.get(id);
  }

  get size(): number {
    return this.byId.size;
  }

  /** Where a file's bytes are. */
  pathOf(file: MediaFile): string | undefined {
    if (file.target) return file.target;
    const category = this.byAlias.get(file.alias);
    return category && path.join(category.dir, file.name);
  }

  /** Creates the category or updates its display name, privacy and directory. */
  setCategory(alias: string, meta: CategoryMeta, dir: string): Category {
    const existing = this.byAlias.get(alias);
    if (existing) {
      existing.meta = meta;
      existing.dir = dir;
      return existing;
    }
    const category = new Category(alias, meta, dir);
    this.byAlias.set(alias, category);
    return category;
  }

  dropCategory(alias: string): void {
    this.faults.delete(alias);
    const category = this.byAlias.get(alias);
    if (!category) return;
    for (const file of category.files.values()) this.byId.delete(file.id);
    this.byAlias.delete(alias);
  }

  /** Adds a file, replacing the entry of the same name (its id changes with its content). */
  put(file: MediaFile): void {
    const category = this.byAlias.get(file.alias);
    if (!category) return;
    // The same file read again (readable again after a fault) keeps its place in the listing.
    const known = category.files.get(file.name);
    if (known?.id === file.id) file.seen = known.seen;
    this.remove(file.alias, file.name);
    category.add(file);
    this.byId.set(file.id, file);
  }

  /** The file stays known by name and id, out of the picks and counts, until it is read again. */
  setUnreadable(file: MediaFile, code: string): boolean {
    const category = this.byAlias.get(file.alias);
    if (!category || category.files.get(file.name) !== file) return false;
    category.delete(file);
    file.unreadable = code;
    category.add(file);
    return true;
  }

  remove(alias: string, name: string): void {
    const category = this.byAlias.get(alias);
    const file = category?.files.get(name);
    if (!category || !file) return;
    category.delete(file);
    this.byId.delete(file.id);
  }
}
