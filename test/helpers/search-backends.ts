// One data set served by both search backends at once: the in-memory index (SEARCH_DATA) and
// PostgreSQL (SEARCH_DATABASE_URL, after `npm run search-import`), with a value many rows share,
// for the paging, bulk and export tests, which expect the same answers from both.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { writeSyntheticData } from '../../scripts/search-data.ts';
import { createDatabase, runImport, type TestDatabase } from './postgres.ts';
import { startApp, type RunningApp } from './service.ts';

/** An answer without what differs from run to run (timings) or between backends (cursors carry the data version). */
export function comparable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(comparable);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => !['took_ms', 'duration_ms', 'next_cursor'].includes(k)).map(([k, v]) => [k, comparable(v)]));
}

/** The e-mail every shared row holds. */
export const SHARED_EMAIL = 'paged.holder@example.org';
/** Row i's own name (a name has no digits): `Paged Holder` and i in three letters, `Paged Holderaab` for 1. */
export const sharedName = (i: number) => `Paged Holder${[676, 26, 1].map((d) => String.fromCharCode(97 + (Math.floor(i / d) % 26))).join('')}`;
export const sharedRow = (i: number) => ({ full_name: sharedName(i), email: SHARED_EMAIL, row: i });

export interface Backends {
  dir: string;
  /** The data folder both serve (people.jsonl in it). */
  data: string;
  /** DATA_DIR of both (their key store). */
  dataDir: string;
  db: TestDatabase;
  memory: RunningApp;
  postgres: RunningApp;
  both: Array<[string, RunningApp]>;
  /** Imports the data folder again (after a change), as the operator would. */
  reimport(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Generated records plus `shared` rows holding SHARED_EMAIL (and `extra` records), imported and
 * served by both backends with `env` besides.
 */
export async function startBackends(name: string, shared: number, env: Record<string, string> = {}, extra: Array<Record<string, unknown>> = []): Promise<Backends> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `skinfarm-${name}-`));
  const data = path.join(dir, 'data');
  const dataDir = path.join(dir, 'state');
  await writeSyntheticData(path.join(data, 'people.jsonl'), 200, { seed: 9, extra: [...Array.from({ length: shared }, (_, i) => sharedRow(i)), ...extra] });
  const db = await createDatabase();
  const reimport = async () => {
    const run = await runImport(db.url, data);
    if (run.code !== 0) throw new Error(`search-import: exit ${run.code}: ${run.stderr}`);
  };
  await reimport();
  const common = { SERVICES: 'search', DATA_DIR: dataDir, SEARCH_RATE_LIMIT: '1000000', OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false', ...env };
  const [memory, postgres] = await Promise.all([startApp({ ...common, SEARCH_DATA: data }), startApp({ ...common, SEARCH_DATABASE_URL: db.url })]);
  return {
    dir, data, dataDir, db, memory, postgres, reimport,
    both: [['memory', memory], ['postgres', postgres]],
    stop: async () => {
      await Promise.allSettled([memory.stop(), postgres.stop()]);
      await db.drop();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
