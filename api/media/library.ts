// The in-memory index: categories, each with a random bag per media type and orientation, and
// every file by its permanent id. The scanner and watcher write to it; requests only read.
import path from 'node:path';
import type { OrientationFilter } from './orientation.ts';
import { RandomBag } from './picker.ts';
import type { CategoryMeta, MediaFile, MediaType } from './types.ts';

/** 'any' holds every file of a type; a file is in one orientation bag at most, so they share a slot. */
interface Bags { any: RandomBag<'anySlot', MediaFile>; landscape: RandomBag<'orientationSlot', MediaFile>; portrait: RandomBag<'orientationSlot', MediaFile> }

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

  constructor(alias: string, meta: CategoryMeta, dir: string) {
    this.alias = alias;
    this.meta = meta;
    this.dir = dir;
    const bags = (): Bags => ({ any: new RandomBag('anySlot'), landscape: new RandomBag('orientationSlot'), portrait: new RandomBag('orientationSlot') });
    this.bags = { image: bags(), video: bags() };
  }

  add(file: MediaFile): void {
    this.files.set(file.name, file);
    const bags = this.bags[file.format.type];
    bags.any.add(file);
    // Square files are in no orientation bag.
    if (file.orientation !== 'square') bags[file.orientation].add(file);
  }

  delete(file: MediaFile): void {
    this.files.delete(file.name);
    const bags = this.bags[file.format.type];
    bags.any.delete(file);
    if (file.orientation !== 'square') bags[file.orientation].delete(file);
  }

  pick(type: MediaType, orientation?: OrientationFilter): MediaFile | undefined {
    return this.bags[type][orientation ?? 'any'].pick();
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

  category(alias: string): Category | undefined {
    return this.byAlias.get(alias);
  }

  /** Categories ready to serve: read whole at least once. */
  categories(): Category[] {
    return [...this.byAlias.values()].filter((category) => category.indexed);
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
    const category = this.byAlias.get(alias);
    if (!category) return;
    for (const file of category.files.values()) this.byId.delete(file.id);
    this.byAlias.delete(alias);
  }

  /** Adds a file, replacing the entry of the same name (its id changes with its content). */
  put(file: MediaFile): void {
    const category = this.byAlias.get(file.alias);
    if (!category) return;
    this.remove(file.alias, file.name);
    category.add(file);
    this.byId.set(file.id, file);
  }

  remove(alias: string, name: string): void {
    const category = this.byAlias.get(alias);
    const file = category?.files.get(name);
    if (!category || !file) return;
    category.delete(file);
    this.byId.delete(file.id);
  }
}
