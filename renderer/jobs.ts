// What travels between the API, the pool and the page.
import type { PoseName } from '../shared/skin-layout.ts';
import type { NormalizedCape, NormalizedSkin } from './skin-normalize.ts';

export type RenderKind = 'render' | 'cube' | 'head' | 'body';

/** How a figure is seen: shared by the image endpoints' options and the render jobs. */
export interface ViewOptions {
  size: number;
  yaw: number;
  pitch: number;
  shadow: boolean;
  outer: boolean;
  /** RRGGBB, lower case, or null for transparent. */
  bg: string | null;
}

export interface RenderJob extends ViewOptions {
  kind: RenderKind;
  skin: NormalizedSkin;
  slim: boolean;
  cape?: NormalizedCape | null;
  scale?: number;
  view?: 'front' | 'back';
  /** `render` only; standing when absent. */
  pose?: PoseName;
}

/** A texture on its way to a worker: raw RGBA with its content key. */
export interface WireTexture { key: string; width: number; height: number; data: Uint8Array }

/** A job as a worker thread gets it (structured-cloned). */
export interface WireJob extends Omit<RenderJob, 'skin' | 'cape'> {
  skin: WireTexture; cape: WireTexture | null;
  /** Tests only (RenderFarmConfig.testHooks): the page hangs on this job. */
  hang?: true;
}

/** A job as the page sees it: a texture's bytes (base64) only when the page does not hold it yet. */
export interface PageTexture { key: string; width: number; height: number; base64: string | null }
export interface PageJob extends Omit<WireJob, 'skin' | 'cape'> { skin: PageTexture; cape: PageTexture | null }

/** What a page holds: its JS heap (used, after a collection), its textures, geometries and shader programs. */
export interface PageMemory { jsHeapBytes: number; textures: number; textureBytes: number; glTextures: number; glGeometries: number; glPrograms: number }

/**
 * One call into a worker: the keys of the browsers running now (a worker keeps to one of them), the
 * jobs, and the JS heap past which the page is replaced between batches. `probe` asks the page
 * for its WebGL renderer or its memory instead of drawing, or (`trim`) replaces a page that has
 * drawn by a fresh one and has the thread collect its garbage.
 */
export interface WorkerTask { browsers: string[]; jobs: WireJob[]; pageHeapLimitBytes: number; probe?: 'info' | 'memory' | 'trim' }
export interface WorkerResult { images?: Array<Buffer | Uint8Array | { error: string }>; info?: { renderer: string; version: string }; memory?: PageMemory }

function wire(texture: { data: Buffer; hash: string }, width: number, height: number): WireTexture {
  return { key: texture.hash, width, height, data: texture.data };
}

export function toWireJob(job: RenderJob): WireJob {
  return {
    ...job,
    skin: wire(job.skin, job.skin.size, job.skin.size),
    cape: job.cape ? wire(job.cape, job.cape.width, job.cape.height) : null,
  };
}
