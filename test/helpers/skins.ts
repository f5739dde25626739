// A fake upstream plus the real skins service pointed at it, for one test file.
import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions } from '../../scripts/fake-upstream/server.ts';
import { call, startApp, type CallOptions, type RunningApp } from './service.ts';

export interface SkinsHarness {
  fake: FakeUpstream;
  app: RunningApp;
  base: string;
  get(path: string, init?: RequestInit, options?: CallOptions): ReturnType<typeof call>;
  stop(): Promise<void>;
}

export async function startSkins(env: Record<string, string> = {}, fakeOptions: FakeUpstreamOptions = {}): Promise<SkinsHarness> {
  const fake = await startFakeUpstream(fakeOptions);
  // Upstream budgets are off unless a test is about them: suites make bursts of calls on purpose.
  const unlimited = {
    OFFICIAL_NAMES_BUDGET: 'off', OFFICIAL_PROFILES_BUDGET: 'off', EXTERNAL_NAMES_BUDGET: 'off', EXTERNAL_PROFILES_BUDGET: 'off',
    BEDROCK_NAMES_BUDGET: 'off', BEDROCK_PROFILES_BUDGET: 'off',
  };
  // A generous timeout: on a loaded CI machine a fake answer can take seconds; tests about
  // timeouts set their own.
  const app = await startApp({ SERVICES: 'skins', UPSTREAM_TIMEOUT_MS: '20000', ...unlimited, ...fake.env, ...env });
  const base = app.urls.skins;
  return {
    fake,
    app,
    base,
    get: (path, init, options) => call(`${base}${path}`, init, options),
    async stop() {
      await app.stop();
      await fake.close();
    },
  };
}
