// `node scripts/fake-upstream/main.ts [--port 4000] [--host 127.0.0.1] [--latency 0]`: runs the fake
// upstream and prints the environment lines that point the services at it. Stops on SIGINT/SIGTERM.
import { parseArgs } from 'node:util';
import { startFakeUpstream } from './server.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    latency: { type: 'string', default: '0' },
  },
});
const fake = await startFakeUpstream({ port: Number(values.port), host: values.host, latencyMs: Number(values.latency) });
process.stderr.write(`fake upstream listening on ${fake.baseUrl} (controls: ${fake.baseUrl}/__calls, /__requests, /__reset, /__control)\n`);
// stdout carries only the env lines (KEY=value), ready to export; the banner goes to stderr.
for (const [name, value] of Object.entries(fake.env)) process.stdout.write(`${name}=${value}\n`);

const stop = async () => {
  await fake.close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
