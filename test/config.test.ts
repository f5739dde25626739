// One configuration pass: every variable of every service is read and validated before anything
// starts, so a bad value anywhere stops the process with 78 and starts no browser.
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { ConfigError, loadConfig, withListenAddresses } from '../api/config.ts';
import { integer } from '../api/settings.ts';
import { chromiumArgs } from '../renderer/browser.ts';
import { call, ROOT, startApp } from './helpers/service.ts';

test('a bad media setting stops the start with 78 before any browser starts', async (t) => {
  const error = await t.throwsAsync(startApp({ SERVICES: 'skins,media', RENDER_WORKERS: '1', MEDIA_RATE_LIMIT: 'lots', MEDIA_PUBLIC_URL: 'javascript:alert(1)' }));
  t.regex(error.message, /exited with 78/);
  t.regex(error.message, /MEDIA_RATE_LIMIT must be an integer/);
  t.regex(error.message, /MEDIA_PUBLIC_URL must be an absolute http\(s\) URL/);
  t.notRegex(error.message, /chromium started|render farm/);
});

test('integers are plain decimal digits: hex, exponents and padding are refused', (t) => {
  for (const raw of ['0x40', '1e2', '4.0', '--1', 'NaN', '-0', '+1']) {
    const error = t.throws(() => loadConfig({ RENDER_WORKERS: raw, MEDIA_RATE_LIMIT: raw }), { instanceOf: ConfigError });
    t.regex(error.message, /RENDER_WORKERS must be an integer/, raw);
    t.regex(error.message, /MEDIA_RATE_LIMIT must be an integer/, raw);
  }
  const config = loadConfig({ RENDER_WORKERS: ' 3 ', MEDIA_RATE_LIMIT: '42' });
  t.is(config.render.workers, 3);
  t.is(config.media.rateLimit, 42);
});

test('one integer rule: a minus sign only where the range has negatives', (t) => {
  t.is(integer(-10, 10).parse('-3'), -3);
  t.is(integer(-10, 10).parse('-11'), undefined);
  t.is(integer(0, 10).parse('-0'), undefined);
  t.is(integer(0, 10).parse('007'), 7);
});

test('one app shell: ACCESS_LOG applies to every service, and each reports package.json\'s version', async (t) => {
  const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skinfarm-shell-'));
  const app = await startApp({ ACCESS_LOG: 'false', MEDIA_DIR: path.join(dir, 'media'), DATA_DIR: path.join(dir, 'data') });
  t.teardown(() => app.stop());
  for (const service of ['skins', 'media', 'search'] as const) {
    const health = await call(`${app.urls[service]}/health`);
    t.is(health.json.version, version, service);
    t.is(health.headers.get('x-powered-by'), `Skinfarm-${service}/${version}`);
  }
  await call(`${app.urls.media}/?img=scenery&format=json`);
  t.false(app.logs.some((l) => l.msg === 'request'), 'no access log line from any service');
});

test('the loaded configuration is frozen; the bound ports live in a copy', (t) => {
  const config = loadConfig({ SKINS_PORT: '0', MEDIA_PORT: '0' });
  t.true(Object.isFrozen(config) && Object.isFrozen(config.ports) && Object.isFrozen(config.media));
  t.throws(() => { (config as { publicUrl: string }).publicUrl = 'http://elsewhere'; });
  const running = withListenAddresses(config, { skins: 41234, media: 41235 });
  t.is(running.publicUrl, 'http://localhost:41234');
  t.is(running.ports.media, 41235);
  t.is(config.publicUrl, 'http://localhost:0', 'the loaded one is untouched');
  t.is(withListenAddresses(loadConfig({ PUBLIC_URL: 'https://skins.example.org' }), { skins: 41234 }).publicUrl, 'https://skins.example.org');
});

test('IDLE_TRIM_SECONDS and MEMORY_ALLOCATOR refuse what they cannot mean, each named', (t) => {
  for (const [trim, allocator] of [['-1', 'tcmalloc'], ['15s', 'jemalloc;rm'], ['99999999', ' auto-ish ']]) {
    const error = t.throws(() => loadConfig({ IDLE_TRIM_SECONDS: trim, MEMORY_ALLOCATOR: allocator }), { instanceOf: ConfigError });
    t.true(error.problems.some((p) => p.startsWith('IDLE_TRIM_SECONDS')), error.problems.join('; '));
    t.true(error.problems.some((p) => p.startsWith('MEMORY_ALLOCATOR')), error.problems.join('; '));
  }
  const ok = loadConfig({ IDLE_TRIM_SECONDS: '0', MEMORY_ALLOCATOR: ' System ' });
  t.is(ok.idleTrimSeconds, 0);
  t.is(ok.memoryAllocator, 'system');
});

test('RENDER_GPU_BACKEND picks the ANGLE backend the GPU flags name; anything else is refused by name', (t) => {
  t.is(loadConfig({}).render.gpuBackend, 'gl-egl');
  t.is(loadConfig({ RENDER_GPU_BACKEND: 'Vulkan' }).render.gpuBackend, 'vulkan');
  const error = t.throws(() => loadConfig({ RENDER_GPU_BACKEND: 'metal' }), { instanceOf: ConfigError });
  t.regex(error.message, /RENDER_GPU_BACKEND must be one of gl-egl, gles-egl, vulkan/);
  t.true(chromiumArgs(true, 'gles-egl').includes('--use-angle=gles-egl'));
  t.true(chromiumArgs(true, 'vulkan').includes('--use-angle=vulkan'));
  t.true(chromiumArgs(true, 'vulkan').includes('--enable-features=Vulkan'));
  t.false(chromiumArgs(true, 'gl-egl').includes('--enable-features=Vulkan'));
  // In software the backend does not matter: SwiftShader, whatever was configured.
  t.deepEqual(chromiumArgs(false, 'vulkan'), chromiumArgs(false, 'gl-egl'));
  t.true(chromiumArgs(false, 'vulkan').includes('--use-angle=swiftshader'));
});
