// PostgreSQL for the search tests: a private database per test file on the machine's server
// (127.0.0.1:5432, or TEST_POSTGRES_URL; .ci/run starts one), the import command run as an
// operator runs it, and a TCP proxy a test can cut to take the database away from a service.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import pg from 'pg';
import { ROOT } from './service.ts';
import { onServer } from '../../scripts/postgres.ts';

export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  drop(): Promise<void>;
}


/** A new empty database with a random name; drop() removes it, connections and all. */
export async function createDatabase(): Promise<TestDatabase> {
  const name = `skinfarm_test_${randomBytes(6).toString('hex')}`;
  await onServer(POSTGRES_URL, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    query: (text, values) => onServer(url.href, async (c) => (await c.query(text, values)).rows),
    drop: () => onServer(POSTGRES_URL, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}

export interface ImportRun { code: number | null; logs: Array<Record<string, unknown>>; stderr: string }

/**
 * `npm run search-import -- <target> [args]` against `url`. `onLog` sees each log line as it comes, with
 * the process (to stop it midway).
 */
export async function runImport(url: string, target: string, options: { args?: string[]; env?: Record<string, string>; onLog?: (entry: Record<string, unknown>, child: ReturnType<typeof spawn>) => void } = {}): Promise<ImportRun> {
  const child = spawn(process.execPath, ['scripts/search-import.ts', target, ...options.args ?? []], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', SEARCH_DATABASE_URL: url, LOG_FORMAT: 'json', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  let stderr = '';
  let pending = '';
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    const lines = (pending + text).split('\n');
    pending = lines.pop()!;
    for (const line of lines.filter(Boolean)) {
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      options.onLog?.(entry, child);
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (text: string) => { stderr += text; });
  const [code] = await once(child, 'close') as [number | null];
  return { code, logs, stderr };
}

/** The outcome line of each file of an import run, by file. */
export const fileOutcomes = (run: ImportRun) =>
  Object.fromEntries(run.logs.filter((l) => l.msg === 'search import file').map((l) => [l.file as string, l]));

export interface TcpProxy { port: number; url: (databaseUrl: string) => string; cut(): Promise<void>; restore(): Promise<void>; close(): Promise<void> }

/**
 * A TCP proxy to the PostgreSQL server: cut() resets every connection and each new one at once,
 * restore() passes them through again. The proxy keeps its port while cut: a port given back
 * could be taken by another process (any connection's local port) before restore() listens again.
 */
export async function tcpProxy(target = new URL(POSTGRES_URL)): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let refusing = false;
  const server = net.createServer((client) => {
    if (refusing) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => { sockets.delete(s); client.destroy(); upstream.destroy(); });
    }
    client.pipe(upstream).pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  const cut = async () => {
    refusing = true;
    for (const s of sockets) s.resetAndDestroy();
  };
  return {
    port,
    url: (databaseUrl) => {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.href;
    },
    cut,
    restore: async () => {
      refusing = false;
    },
    close: async () => {
      await cut();
      const closed = once(server, 'close');
      server.close();
      await closed;
    },
  };
}
