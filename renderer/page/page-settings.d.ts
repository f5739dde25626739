// What render-worker.ts serves the page as /page-settings.js (built from shared/skin-layout.ts
// and the worker's texture bound).
import type { PageLayout } from './api.ts';

export declare const LAYOUT: PageLayout;
/** Bytes of texture data the page keeps; the worker's mirror of its textures follows the same bound. */
export declare const TEXTURE_BYTES: number;
