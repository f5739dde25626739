// @ts-check
// A page extension (RenderFarmConfig.pageExtension) for the tests: the page notes each batch it
// is asked to draw (its jobs' sizes and yaws, and how many carried a texture's bytes) and adds
// the notes to what memory() answers, so a test sees how the farm split its work into calls.
/** @import { PageExtension } from '../../renderer/page/api.ts' */

/** @type {Array<{ sizes: number[], yaws: number[], textureBytesSent: number }>} */
const batches = [];

/** @type {PageExtension} */
export default (api) => ({
  ...api,
  renderBatch: (jobs) => {
    batches.push({ sizes: jobs.map((j) => j.size), yaws: jobs.map((j) => j.yaw), textureBytesSent: jobs.filter((j) => j.skin.texels !== null).length });
    return api.renderBatch(jobs);
  },
  memory: () => ({ ...api.memory(), batches }),
});
