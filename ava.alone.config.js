// Tests that measure a load with wrk, run by `npm test` after the rest and on their own: beside
// the tests that launch browsers, two cores starved them for seconds (62 of 400 paced requests).
export default {
  extensions: ['ts'],
  files: ['test/loadtest-tools.test.ts'],
  timeout: '3m',
  workerThreads: false,
};
