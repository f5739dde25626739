// A private redis-server on a free port for tests that need isolation; null (with the reason)
// when the binary is missing, so such tests skip instead of failing on a machine without it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';

export interface TestRedis { url: string; port: number; stop(): Promise<void> }

export function redisUnavailableReason(): string | null {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return probe.error ? `redis-server not found (${probe.error.message}); Redis cases skipped` : null;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

async function waitForPort(port: number, child: ChildProcess, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    const connected = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => { socket.end(); resolve(true); });
      socket.once('error', () => resolve(false));
    });
    if (connected) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('redis-server did not start in time');
}

/** `args`: more redis-server options (a memory bound and its policy, DEBUG enabled). */
async function startOn(port: number, args: readonly string[] = []): Promise<TestRedis> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], { stdio: 'ignore' });
  await waitForPort(port, child, Date.now() + 10_000);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** A Redis on a free port; `startRedis.onPort(p)` starts one again where a stopped one was. */
export const startRedis = Object.assign(async (args: readonly string[] = []) => startOn(await freePort(), args), { onPort: startOn });
