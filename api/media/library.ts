// The in-memory index: categories, each with a random bag per media type and orientation, and
// every file by its permanent id. The scanner and watcher write to it; requests only read.
import type { OrientationFilter } from './orientation.ts';
import { RandomBag } from './picker.ts';
import type { CategoryMeta, MediaFile, MediaType } from './types.ts';

type Bags = Record<OrientationFilter | 'any', RandomBag<MediaFile>>;

export interface CategoryCounts { files: number; images: number; videos: number; landscape: number; portrait: number; square: number }

export class Category {
  readonly alias: string;
  meta: CategoryMeta;
  /** Files by name inside the category directory. */
  readonly files = new Map<string, MediaFile>();
  /** One bag per media type and orientation filter ('any' holds every file of the type). */
  private readonly bags: Record<MediaType, Bags>;

  constructor(alias: string, meta: CategoryMeta) {
    this.alias = alias;
    this.meta = meta;
    const bags = (): Bags => ({ any: new RandomBag(), landscape: new RandomBag(), portrait: new RandomBag() });
    this.bags = { image: bags(), video: bags() };
  }

  /** The bags a file belongs in: its type's 'any', plus its orientation's unless it is square. */
  private bagsOf(file: MediaFile): RandomBag<MediaFile>[] {
    const bags = this.bags[file.type];
    return file.orientation === 'square' ? [bags.any] : [bags.any, bags[file.orientation]];
  }

  add(file: MediaFile): void {
    this.files.set(file.name, file);
    for (const bag of this.bagsOf(file)) bag.add(file);
  }

  delete(file: MediaFile): void {
    this.files.delete(file.name);
    for (const bag of this.bagsOf(file)) bag.delete(file);
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
  private readonly byAlias = new Map<string, Category>();
  private readonly byId = new Map<string, MediaFile>();

  category(alias: string): Category | undefined {
    return this.byAlias.get(alias);
  }

  categories(): Category[] {
    return [...this.byAlias.values()];
  }

  file(id: string): MediaFile | undefined {
    return this.byId.get(id);
  }

  get size(): number {
    return this.byId.size;
  }

  /** Creates the category or updates its display name and privacy. */
  setCategory(alias: string, meta: CategoryMeta): Category {
    const existing = this.byAlias.get(alias);
    if (existing) {
      existing.meta = meta;
      return existing;
    }
    const category = new Category(alias, meta);
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
