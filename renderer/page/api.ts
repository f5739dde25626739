// The page's side of the render path: what main.js puts on window.skinfarm (scene.js's API, as
// the farm's page extension shapes it) and render-worker.ts calls, one CDP call per batch; and
// what the worker serves the page (/page-settings.js). Types only: checked against scene.js
// (// @ts-check) and the worker's calls alike.
import type { PageJob, PageMemory } from '../jobs.ts';
import type { BoxSize, FaceName, PartName, Pose, PoseName, Rect } from '../../shared/skin-layout.ts';

/** A job's answer: its PNG as a data URL, or why the page could not draw it (that job fails alone). */
export type PageAnswer = string | { error: string };

export interface PageApi {
  /**
   * Draws a batch (its textures' bytes only where the page lacks them); one answer per job, in
   * order. Throws once the page's WebGL context was lost: nothing it drew is an answer.
   */
  renderBatch(jobs: PageJob[]): PageAnswer[];
  /** Its textures and three.js's counts of GPU objects (the worker adds the JS heap). */
  memory(): Omit<PageMemory, 'jsHeapBytes'>;
  /** The WebGL renderer and version the page draws with. */
  webglInfo(): { renderer: string; version: string };
}

/**
 * A page extension (RenderFarmConfig.pageExtension) is an ES module run in every page; its
 * default export gets the scene's API and returns the one the worker calls: one that times each
 * batch, say. The tests' make a page hang or draw wrong (test/helpers/page-that-*.js).
 */
export type PageExtension = (api: PageApi) => PageApi;

/** One part's box size and texture rectangles, in 64-unit texture coordinates. */
export interface PartLayout { size: BoxSize; inner: Record<FaceName, Rect>; outer: Record<FaceName, Rect> }

/** The texture layout and poses, from shared/skin-layout.ts (the page cannot import TypeScript). */
export interface PageLayout {
  parts: Record<'classic' | 'slim', Record<PartName, PartLayout>>;
  cape: { size: BoxSize; faces: Record<FaceName, Rect> };
  elytra: { size: BoxSize; faces: Record<FaceName, Rect> };
  poses: Record<PoseName, Pose>;
}

declare global {
  interface Window {
    /** The page's API, once its scene has loaded. */
    skinfarm: PageApi;
    sceneReady?: true;
    /** The first error while the scene loaded (no WebGL context, for one): the page will never be ready. */
    sceneError?: string;
  }
}
