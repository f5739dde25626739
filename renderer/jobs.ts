// What travels between the API, the pool and the page.
import { createHash } from 'node:crypto';
import type { NormalizedCape, NormalizedSkin } from './skin-normalize.ts';

export type RenderKind = 'render' | 'cube' | 'head' | 'body';

export interface RenderJob {
  kind: RenderKind;
  skin: NormalizedSkin;
  slim: boolean;
  cape?: NormalizedCape | null;
  size: number;
  yaw: number;
  pitch: number;
  shadow: boolean;
  outer: boolean;
  bg: string | null;
  scale?: number;
  view?: 'front' | 'back';
}

/** A job as the page sees it: textures as base64 RGBA. */
export interface PageJob {
  kind: RenderKind; skin: string; skinKey: string; skinSize: number; slim: boolean;
  cape: string | null; capeKey: string | null; capeWidth: number; capeHeight: number;
  size: number; yaw: number; pitch: number; shadow: boolean; outer: boolean; bg: string | null; scale: number | null; view: 'front' | 'back';
}

export interface WorkerTask { endpoint: string; jobs: PageJob[]; info?: boolean }
export interface WorkerResult { images?: Array<Buffer | Uint8Array | { error: string }>; info?: { renderer: string; version: string } }

/** The page keeps recent textures by content, so equal textures are uploaded to the GPU once. */
function contentKey(data: Buffer): string {
  return createHash('sha1').update(data).digest('base64');
}

export function toPageJob(job: RenderJob): PageJob {
  return {
    kind: job.kind,
    skin: job.skin.data.toString('base64'),
    skinKey: contentKey(job.skin.data),
    skinSize: job.skin.size,
    slim: job.slim,
    cape: job.cape ? job.cape.data.toString('base64') : null,
    capeKey: job.cape ? contentKey(job.cape.data) : null,
    capeWidth: job.cape?.width ?? 0,
    capeHeight: job.cape?.height ?? 0,
    size: job.size,
    yaw: job.yaw,
    pitch: job.pitch,
    shadow: job.shadow,
    outer: job.outer,
    bg: job.bg,
    scale: job.scale ?? null,
    view: job.view ?? 'front',
  };
}
