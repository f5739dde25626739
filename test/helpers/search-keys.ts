// A search API key made as an operator makes one: the CLI (`npm run search-keys -- create`) on the
// service's DATA_DIR. Throws with the CLI's own words when it fails.
import { spawnSync } from 'node:child_process';
import { ROOT } from '../../scripts/launch.ts';

/** Creates a key named `name` in `dataDir`'s key store (more CLI flags in `flags`) and returns it. */
export function createSearchKey(dataDir: string, name: string, ...flags: string[]): string {
  const created = spawnSync(process.execPath, ['scripts/search-keys.ts', 'create', '--name', name, ...flags], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir }, encoding: 'utf8' });
  if (created.status !== 0) throw new Error(`search-keys create ${name}: exit ${created.status}: ${created.stderr}`);
  return JSON.parse(created.stdout).key as string;
}
