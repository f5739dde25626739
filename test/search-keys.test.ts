import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { ApiError } from '../shared/errors.ts';
import { FileKeyStore } from '../api/search/keys/file-store.ts';
import { expiryFromDuration, keyState, parseCreateInput, parsePatch, type KeyRecord } from '../api/search/keys/model.ts';
import { call, ROOT, startApp } from './helpers/service.ts';

const dirs: string[] = [];
async function tmpDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-keys-'));
  dirs.push(dir);
  return dir;
}
test.after.always(() => Promise.all(dirs.map((d) => fs.rm(d, { recursive: true, force: true }))));

function record(over: Partial<KeyRecord>): KeyRecord {
  return { id: 'key_1', name: 'n', plan: 'basic', created_at: '2026-01-01T00:00:00.000Z', expires_at: null, request_limit: null, used: 0, disabled: false, hash: 'h', ...over };
}

test('create input: defaults, durations and refusals', (t) => {
  const now = new Date('2026-01-31T12:00:00.000Z');
  t.deepEqual(parseCreateInput({ name: ' ops ' }, now), { name: 'ops', plan: 'basic', expires_at: null, request_limit: null });
  t.is(parseCreateInput({ name: 'a', duration: '2m' }, now).expires_at, '2026-03-31T12:00:00.000Z');
  t.is(parseCreateInput({ name: 'a', duration: 'lifetime' }, now).expires_at, null);
  t.is(parseCreateInput({ name: 'a', expires_at: '2027-05-01T00:00:00+02:00' }, now).expires_at, '2027-04-30T22:00:00.000Z');
  t.is(expiryFromDuration('36h', now), '2026-02-02T00:00:00.000Z');
  for (const bad of [{}, { name: '' }, { name: 'a', plan: 'gold' }, { name: 'a', duration: '2x' }, { name: 'a', duration: '2m', expires_at: '2027-01-01' },
    { name: 'a', request_limit: 0 }, { name: 'a', request_limit: 1.5 }, { name: 'a', expires_at: 'tomorrow' }, { name: 'a', colour: 'red' }, []]) {
    const error = t.throws(() => parseCreateInput(bad, now), { instanceOf: ApiError }, JSON.stringify(bad));
    t.is(error.code, 'bad_request');
  }
});

test('patch input: known fields only, something to change', (t) => {
  t.deepEqual(parsePatch({ disabled: true, request_limit: null, expires_at: null }), { disabled: true, request_limit: null, expires_at: null });
  t.deepEqual(parsePatch({ plan: 'premium', searches_per_minute: 600, page_rows: null }), { plan: 'premium', searches_per_minute: 600, page_rows: null });
  for (const bad of [{}, { disabled: 'yes' }, { used: 0 }, { request_limit: -1 }]) {
    t.throws(() => parsePatch(bad), { instanceOf: ApiError }, JSON.stringify(bad));
  }
});

test('key state: disabled before expired before exhausted', (t) => {
  const now = new Date('2026-06-01T00:00:00.000Z');
  t.is(keyState(record({}), now), 'active');
  t.is(keyState(record({ request_limit: 2, used: 2 }), now), 'exhausted');
  t.is(keyState(record({ request_limit: 2, used: 2, expires_at: '2026-06-01T00:00:00.000Z' }), now), 'expired');
  t.is(keyState(record({ request_limit: 2, used: 2, expires_at: '2026-01-01T00:00:00.000Z', disabled: true }), now), 'disabled');
  t.is(keyState(record({ expires_at: '2026-06-01T00:00:00.001Z' }), now), 'active');
});

test('file store: 50 parallel uses of a 10-use key let exactly 10 through, and the count is on disk', async (t) => {
  const file = path.join(await tmpDir(), 'keys.json');
  const store = new FileKeyStore(file);
  const { key, record: created } = await store.create({ name: 'limited', plan: 'basic', expires_at: null, request_limit: 10 });
  const results = await Promise.all(Array.from({ length: 50 }, () => store.consume(key)));
  t.is(results.filter((r) => r.state === 'active').length, 10);
  t.is(results.filter((r) => r.state === 'exhausted').length, 40);
  const onDisk = JSON.parse(await fs.readFile(file, 'utf8'));
  t.is(onDisk.keys.find((k: KeyRecord) => k.id === created.id).used, 10);
  t.false(JSON.stringify(onDisk).includes(key), 'only the hash is stored');
  // Another process's view (a fresh store on the same file) agrees.
  t.is((await new FileKeyStore(file).consume(key)).state, 'exhausted');
  t.is((await store.consume('sk_unknown')).state, 'unknown');
});

test('file store: the CLI in other processes and this store change the file together without losing anything', async (t) => {
  const dataDir = await tmpDir();
  const store = new FileKeyStore(path.join(dataDir, 'search-keys.json'));
  const { key } = await store.create({ name: 'shared', plan: 'premium', expires_at: null, request_limit: 25 });
  const cli = (name: string) => {
    const child = spawn(process.execPath, ['scripts/search-keys.ts', 'create', '--name', name, '--plan', 'basic', '--duration', '2m'], {
      cwd: ROOT, env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    return once(child, 'exit').then(([code]) => code);
  };
  const [codes, uses] = await Promise.all([
    Promise.all(['cli-1', 'cli-2', 'cli-3', 'cli-4'].map(cli)),
    Promise.all(Array.from({ length: 40 }, () => store.consume(key))),
  ]);
  t.deepEqual(codes, [0, 0, 0, 0]);
  t.is(uses.filter((u) => u.state === 'active').length, 25);
  const keys = await new FileKeyStore(path.join(dataDir, 'search-keys.json')).list();
  t.deepEqual(keys.map((k) => k.name).sort(), ['cli-1', 'cli-2', 'cli-3', 'cli-4', 'shared']);
  t.is(keys.find((k) => k.name === 'shared')!.used, 25);
});

test('file store: uses of a key without a limit wait in memory, add up across instances, and a disable elsewhere is seen at once', async (t) => {
  const file = path.join(await tmpDir(), 'keys.json');
  // Uses held for a minute: only close writes them, however slow the machine.
  const [a, b] = [new FileKeyStore(file, 60_000), new FileKeyStore(file, 60_000)];
  const { key, record: created } = await a.create({ name: 'plan', plan: 'premium', expires_at: null, request_limit: null });
  const results = await Promise.all([...Array.from({ length: 30 }, () => a.consume(key)), ...Array.from({ length: 20 }, () => b.consume(key))]);
  t.true(results.every((r) => r.state === 'active'));
  t.is((await a.list())[0].used, 30, 'an instance counts its own uses before they are written');
  await Promise.all([a.close(), b.close()]);
  const onDisk = () => fs.readFile(file, 'utf8').then((text) => JSON.parse(text).keys[0].used as number);
  t.is(await onDisk(), 50, 'closing writes them, each added to the file\'s latest count');
  await b.update(created.id, { disabled: true });
  t.is((await a.consume(key)).state, 'disabled', 'the other instance\'s change is read before the key is allowed');
  t.is((await a.peek(key)).state, 'disabled');
  await a.close();
  t.is(await onDisk(), 50, 'a refused use is not counted');
});

const ADMIN = 'keysTest-R8wFm3QzK6pXv1NcT5Lb';

test('a stopping service writes the uses it still holds in memory', async (t) => {
  const dataDir = await tmpDir();
  const app = await startApp({ SERVICES: 'search', SEARCH_ADMIN_TOKEN: ADMIN, DATA_DIR: dataDir, OFFICIAL_ENABLED: 'false', EXTERNAL_ENABLED: 'false' });
  const created = await call(`${app.urls.search}/v1/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` }, body: JSON.stringify({ name: 'stops' }) });
  for (let i = 0; i < 3; i++) t.is((await call(`${app.urls.search}/v1/search?query=nobody%40example.org`, { headers: { 'x-api-key': created.json.key } })).status, 200);
  t.is(await app.stop(), 0);
  const onDisk = JSON.parse(await fs.readFile(path.join(dataDir, 'search-keys.json'), 'utf8'));
  t.is(onDisk.keys[0].used, 3);
});

test('file store: a lock left by a crashed process is taken over', async (t) => {
  const file = path.join(await tmpDir(), 'keys.json');
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  await fs.writeFile(`${file}.lock`, dead.stdout);
  const store = new FileKeyStore(file);
  const { record: created } = await store.create({ name: 'after-crash', plan: 'basic', expires_at: null, request_limit: null });
  t.deepEqual((await store.list()).map((k) => k.id), [created.id]);
});

test('file store: uses that cannot be written to a damaged file are said so at close, and the file is left as it is', async (t) => {
  const file = path.join(await tmpDir(), 'keys.json');
  const store = new FileKeyStore(file);
  const { key } = await store.create({ name: 'n', plan: 'basic', expires_at: null, request_limit: null });
  t.is((await store.consume(key)).state, 'active');
  await fs.writeFile(file, '{"version":1,"keys":[{"id"');
  await t.throwsAsync(store.close(), { message: /uses of 1 key\(s\) could not be written/ });
  t.is(await fs.readFile(file, 'utf8'), '{"version":1,"keys":[{"id"');
});

test('file store: a damaged file is refused, never overwritten', async (t) => {
  const file = path.join(await tmpDir(), 'keys.json');
  await fs.writeFile(file, '{"version":1,"keys":[{"id"');
  const store = new FileKeyStore(file);
  await t.throwsAsync(store.create({ name: 'x', plan: 'basic', expires_at: null, request_limit: null }));
  t.is(await fs.readFile(file, 'utf8'), '{"version":1,"keys":[{"id"');
});
