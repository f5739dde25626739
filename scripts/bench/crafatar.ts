// Crafatar beside the service, for loadtest's --crafatar: a copy built outside this repository from
// its public code (nothing of it is committed here; docs/benchmarks.md says how it was built), run
// as its README runs it (`node www.js`) with a Redis and image folders of its own, against the
// same fake upstream as the service. Crafatar reaches Mojang at two fixed https URLs; the copy is
// expected to read them from CRAFATAR_SESSION_URL and CRAFATAR_TEXTURES_URL instead (a two-line
// change to its lib/networking.js), so that both services fetch the same players from the same
// fake. Crafatar names players by UUID only: gen_k's is the fake's official UUID of the name.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { officialUuid } from '../fake-upstream/players.ts';
import { freePort, startRedis } from '../launch.ts';

export interface Crafatar {
  url: string;
  /** Its node process and its Redis: every process of the service, for CPU per request. */
  pids: number[];
  stop(): Promise<void>;
}

export const crafatarUuid = (k: number) => officialUuid(`gen_${k}`);

/** Starts Crafatar from `dir` with `node` (the Node it was built for) against the fake at `fakeBase`. */
export async function startCrafatar(o: { dir: string; node: string; fakeBase: string }): Promise<Crafatar> {
  const redis = await startRedis();
  const images = mkdtempSync(path.join(os.tmpdir(), 'crafatar-images-'));
  const port = await freePort();
  const folder = (name: string) => {
    mkdirSync(path.join(images, name));
    return `${path.join(images, name)}/`;
  };
  const env = {
    PATH: process.env.PATH, HOME: process.env.HOME,
    PORT: String(port), BIND: '127.0.0.1', REDIS_URL: redis.url,
    FACE_DIR: folder('faces'), HELM_DIR: folder('helms'), SKIN_DIR: folder('skins'), RENDER_DIR: folder('renders'), CAPE_DIR: folder('capes'),
    CRAFATAR_SESSION_URL: `${o.fakeBase}/official/session/session/minecraft/profile/`,
    CRAFATAR_TEXTURES_URL: `${o.fakeBase}/official/textures/texture/`,
  };
  const child = spawn(o.node, ['www.js'], { cwd: o.dir, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`crafatar exited with ${child.exitCode}`);
    const up = await fetch(`${url}/`).then((r) => r.ok, () => false);
    if (up) break;
    if (Date.now() > deadline) throw new Error('crafatar did not answer in 30 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    pids: [child.pid!, redis.pid],
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      await redis.stop();
      rmSync(images, { recursive: true, force: true });
    },
  };
}
