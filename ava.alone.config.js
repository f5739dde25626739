// Tests that measure a load with wrk, run by `npm test` after the rest and on their own: beside
// the tests that launch browsers, two cores starved them for seconds (62 of 400 paced requests).
// The suite's settings (package.json "ava"), with these files only.
import packageJson from './package.json' with { type: 'json' };

export default { ...packageJson.ava, files: ['test/loadtest-tools.test.ts'] };
