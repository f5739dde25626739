// @ts-check
// The page extension when the farm is given none (RenderFarmConfig.pageExtension): the scene's API as it is.
/** @import { PageExtension } from './api.ts' */

/** @type {PageExtension} */
export default (api) => api;
