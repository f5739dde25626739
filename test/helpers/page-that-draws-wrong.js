// @ts-check
// A page extension (RenderFarmConfig.pageExtension) for the tests: the second page a browser
// opens draws its first batch, its self-check, at another angle, as a page whose drawing went
// wrong would; every other page draws right. A browser's pages share its localStorage, and each
// browser starts with a profile of its own, so a replaced browser's first page draws right.
/** @import { PageExtension } from '../../renderer/page/api.ts' */

const opened = Number(localStorage.getItem('pagesOpened') ?? 0) + 1;
localStorage.setItem('pagesOpened', String(opened));
let wrong = opened === 2;

/** @type {PageExtension} */
export default (api) => ({
  ...api,
  renderBatch: (jobs) => {
    const turned = wrong ? jobs.map((job) => ({ ...job, yaw: job.yaw + 1 })) : jobs;
    wrong = false;
    return api.renderBatch(turned);
  },
});
