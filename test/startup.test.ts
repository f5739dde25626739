// Start-up that cannot succeed ends with one log line and a non-zero exit code, not a crash
// trace on stderr: a bad setting (78, every problem named) or a port already taken (1).
import net from 'node:net';
import test from 'ava';
import { loadConfig } from '../api/config.ts';
import { startApp } from './helpers/service.ts';

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
