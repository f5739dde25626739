// What travels between the API, the pool and the page.
import type { PoseName } from '../shared/skin-layout.ts';
import type { NormalizedCape, NormalizedSkin } from './skin-normalize.ts';

export const RENDER_KINDS = ['render', 'cube', 'head', 'body', 'bust'] as const;
export type RenderKind = (typeof RENDER_KINDS)[number];

/** Per-limb angles in degrees (RenderJob.limbs). */
export interface Limbs { headYaw: number; headPitch: number; armLeft: number; armRight: number; legLeft: number; legRight: number }

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
  /** `render` and `bust`; standing when absent. */
  pose?: PoseName;
  /**
   * Degrees added to the pose's own angles of the head (yaw: towards the figure's left; pitch:
   * down) and of each limb (swung forward); `render`, `bust` and `body`. Absent when all are 0.
   */
  limbs?: Limbs;
  /**
   * `render` and `bust`: the vertical field of view in degrees of a perspective camera (10-90),
   * the figure framed as the orthographic view frames it; orthographic when absent or 0.
   */
  fov?: number;
  /**
   * `render` only: the frames of one turntable, drawn at these yaws (`yaw` is unused), in one
   * batch of their own; answered as one PNG per yaw (RenderFarm.renderFrames).
   */
  yaws?: number[];
  /**
   * `render` and `body`: the elytra from the cape texture instead of the cape (nothing when that
   * has no elytra art); without a cape texture, plain grey wings of the renderer's own.
   */
  elytra?: boolean;
  /** Upside down, as the game draws Dinnerbone and Grumm (`render`, `body`, `head`, `cube`). */
  flip?: boolean;
  /** Whose job this is (the API's per-client rate-limit key), so a queue can take clients in turn. */
  client?: string;
}

/** A texture on its way to a worker: raw RGBA with its content key. */
export interface WireTexture { key: string; width: number; height: number; data: Uint8Array }

/** A job as a worker thread gets it (structured-cloned). */
export interface WireJob extends Omit<RenderJob, 'skin' | 'cape'> { skin: WireTexture; cape: WireTexture | null }

/**
 * A texture's texels on their way to the page (renderer/texel-pack.ts): base64 of RGBA when
 * `palette` is null, else of one index a texel (two, little-endian, past 256 colours) into
 * `palette`, base64 of its colours as RGBA.
 */
export interface PageTexels { base64: string; palette: string | null }
/** A job as the page sees it (renderer/page/api.ts): a texture's texels only when the page does not hold it yet. */
export interface PageTexture { key: string; width: number; height: number; texels: PageTexels | null }
export interface PageJob extends Omit<WireJob, 'skin' | 'cape'> { skin: PageTexture; cape: PageTexture | null }

/** What a page holds: its JS heap (used, after a collection), its textures, geometries and shader programs. */
export interface PageMemory { jsHeapBytes: number; textures: number; textureBytes: number; glTextures: number; glGeometries: number; glPrograms: number }

/** A browser as a worker finds it: its key in the relay (connectBrowser) and its process. */
export interface BrowserRef { key: string; pid: number }

/**
 * One call into a worker: the browsers running now (a worker keeps to one of them), the jobs, the
 * JS heap past which the page is replaced between batches, and the digest of the self-check render
 * every page must draw before it draws for anyone (null while the farm starts: the first pages
 * set it). `probe` asks the page for its WebGL renderer and self-check or its memory instead of
 * drawing, or (`trim`) replaces a page that has drawn by a fresh one and has the thread collect
 * its garbage.
 */
export interface WorkerTask { browsers: BrowserRef[]; jobs: WireJob[]; pageHeapLimitBytes: number; selfCheck: string | null; probe?: 'info' | 'memory' | 'trim' | 'park' }
export interface WorkerResult {
  /** One per job: its PNG, a job of `yaws` its PNGs in order, or why it failed. */
  images?: Array<Buffer | Uint8Array | Uint8Array[] | { error: string }>; memory?: PageMemory;
  info?: { renderer: string; version: string; selfCheck: string };
}

/**
 * How a worker's error begins when nothing its page drew may be trusted (its WebGL context was
 * lost, or the GPU process it drew on ended), and when a fresh page could not draw its self-check
 * right (a wrong picture, no WebGL, a GPU process that kept restarting): its browser is replaced.
 */
export const IN_DOUBT = 'page in doubt: ';
export const SELF_CHECK_FAILED = 'self-check failed: ';

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
