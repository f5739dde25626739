// Start-up that cannot succeed ends with one log line and a non-zero exit code, not a crash
// trace on stderr: a bad setting (78, every problem named) or a port already taken (1).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import test from 'ava';
import { loadConfig } from '../api/config.ts';
import { call, ROOT, startApp } from './helpers/service.ts';

test('a bad setting stops the process with code 78, naming the problem', async (t) => {
  const error = await t.throwsAsync(startApp({ SKINS_PORT: 'eighty', RENDER_GPU: 'sometimes' }));
  t.regex(error!.message, /exited with 78/);
  t.regex(error!.message, /SKINS_PORT/);
  t.regex(error!.message, /RENDER_GPU/);
});

test('a port in use stops the process with code 1 and one start-up line', async (t) => {
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => taken.close());
  const port = (taken.address() as net.AddressInfo).port;
  const error = await t.throwsAsync(startApp({ SERVICES: 'skins', SKINS_PORT: String(port) }));
  t.regex(error!.message, /exited with 1/);
  const lines = error!.message.split('\n').slice(1).filter(Boolean);
  const failure = lines.map((line) => { try { return JSON.parse(line); } catch { return null; } }).find((entry) => entry?.msg === 'start-up failed');
  t.truthy(failure, error!.message);
  t.regex(JSON.stringify(failure.err), /EADDRINUSE/);
  t.false(lines.some((line) => line.startsWith('file://') || line.startsWith('    at ')), 'no uncaught trace on stderr');
});

test('RENDER_BROWSERS: a count, or 0 and unset for one per page in software and one on a GPU', (t) => {
  t.is(loadConfig({ RENDER_BROWSERS: '3' }).render.browsers, 3);
  t.is(loadConfig({ RENDER_BROWSERS: '0' }).render.browsers, undefined);
  t.is(loadConfig({}).render.browsers, undefined);
  t.throws(() => loadConfig({ RENDER_BROWSERS: '65' }), { message: /RENDER_BROWSERS/ });
});

test('LOG_FORMAT=pretty: readable lines, then a banner whose addresses answer', async (t) => {
  const child = spawn(process.execPath, [path.join(ROOT, 'api/main.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', SKINS_PORT: '0', MEDIA_PORT: '0', SEARCH_PORT: '0', RENDER_WORKERS: '0', LOG_FORMAT: 'pretty', DEMO_PLAYER: 'SlimAlex' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => child.kill('SIGKILL'));
  const lines: string[] = [];
  // The banner ends with the line about Ctrl-C (a JSON `ready` line would mean no pretty format).
  for await (const line of readline.createInterface({ input: child.stdout })) {
    lines.push(line);
    if (line.includes('Ctrl-C') || line.includes('"msg":"ready"')) break;
  }
  const text = lines.join('\n');
  t.regex(text, /^\d\d:\d\d:\d\d INFO  skins: listening port=\d+ host=127\.0\.0\.1 url=http:\/\/127\.0\.0\.1:\d+$/m);
  t.false(lines.some((line) => line.startsWith('{')), 'no JSON lines');
  const pages = [...text.matchAll(/http:\/\/127\.0\.0\.1:\d+\/(?:docs|status|health)\b/g)].map((m) => m[0]);
  t.is(pages.length, 4, text);
  for (const url of pages) t.is((await call(url)).status, 200, url);
  t.regex(text, /try +http:\/\/127\.0\.0\.1:\d+\/v1\/render\/SlimAlex\/256/);
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  t.is(code, 0);
});

test('the JSON listening line carries the address a client uses', async (t) => {
  const app = await startApp({ SERVICES: 'search,skins' });
  t.teardown(() => app.stop());
  for (const line of app.logs.filter((l) => l.msg === 'listening')) {
    t.is(line.url, `http://127.0.0.1:${line.port}`);
    t.is((await call(`${line.url}/health`)).status, 200);
  }
  t.is(app.logs.filter((l) => l.msg === 'listening').length, 2);
});
