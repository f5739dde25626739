// @ts-check
// A page extension (RenderFarmConfig.pageExtension) for the tests: the page spins forever on a
// batch holding a job of size 33 (a size no other test asks for), as a page stuck in a frame
// would. Nothing in the page can stop it: its thread must be ended and the page closed.
/** @import { PageExtension } from '../../renderer/page/api.ts' */

/** @type {PageExtension} */
export default (api) => ({
  ...api,
  renderBatch: (jobs) => {
    if (jobs.some((job) => job.size === 33)) for (;;);
    return api.renderBatch(jobs);
  },
});
