// Operator CLI for search API keys, on the same store as the running service (REDIS_URL, else
// the JSON file in DATA_DIR). Same validation as the admin API.
//   npm run search-keys -- create --name NAME [--plan basic|premium] [--duration 2m|lifetime | --expires-at ISO] [--limit N] [FIGURES] [--key-only]
//   npm run search-keys -- list [--json]
//   npm run search-keys -- update ID [--disable | --enable] [--plan basic|premium] [--limit N|none] [--expires-at ISO|never] [FIGURES]
//   npm run search-keys -- delete ID
// FIGURES: --searches-per-minute, --page-rows, --bulk-size, --export-rows, each N or `plan` (the plan's).
import { parseArgs } from 'node:util';
import type { RedisClientType } from '@redis/client';
import { ConfigError, loadConfig } from '../api/config.ts';
import { connectRedis } from '../api/redis.ts';
import { parseCreateInput, parsePatch, publicKey, type KeyPatch, type PublicKey } from '../api/search/keys/model.ts';
import { openKeyStore } from '../api/search/keys/store.ts';
import { FIGURES, type Figure } from '../api/search/plans.ts';
import { isApiError } from '../shared/errors.ts';
import { createLogger } from '../shared/log.ts';

const USAGE = `usage:
  search-keys create --name NAME [--plan basic|premium] [--duration 2m|1y|lifetime | --expires-at ISO] [--limit N] [FIGURES] [--key-only]
  search-keys list [--json]
  search-keys update ID [--disable | --enable] [--plan basic|premium] [--limit N|none] [--expires-at ISO|never] [FIGURES]
  search-keys delete ID
FIGURES (the key's own, instead of its plan's; \`plan\` = the plan's again):
  --searches-per-minute N|plan  --page-rows N|plan  --bulk-size N|plan  --export-rows N|plan (0 = no export)`;

/** The option of each plan figure: searches_per_minute is --searches-per-minute. */
const figureOption = (figure: Figure) => figure.replaceAll('_', '-') as 'searches-per-minute' | 'page-rows' | 'bulk-size' | 'export-rows';

const OPTIONS = {
  'searches-per-minute': { type: 'string' },
  'page-rows': { type: 'string' },
  'bulk-size': { type: 'string' },
  'export-rows': { type: 'string' },
  name: { type: 'string' },
  plan: { type: 'string' },
  duration: { type: 'string' },
  'expires-at': { type: 'string' },
  limit: { type: 'string' },
  disable: { type: 'boolean' },
  enable: { type: 'boolean' },
  json: { type: 'boolean' },
  'key-only': { type: 'boolean' },
} as const;

/** A problem the operator fixes by running the command differently; `status` is the exit code. */
class UsageError extends Error {
  readonly status: number;
  constructor(message: string, status = 64) {
    super(message);
    this.status = status;
  }
}

function limitValue(text: string): number | null | string {
  if (text === 'none') return null;
  // Non-numbers go through as text so the shared validation names the problem.
  return /^\d+$/.test(text) ? Number(text) : text;
}

/** The figures the options give, as the admin API takes them: a number, null (`plan`), or text its validation names. */
function figureFields(values: Partial<Record<ReturnType<typeof figureOption>, string>>): Record<string, unknown> {
  const given = FIGURES.filter((f) => values[figureOption(f)] !== undefined);
  return Object.fromEntries(given.map((f) => {
    const value = values[figureOption(f)]!;
    return [f, value === 'plan' ? null : /^\d+$/.test(value) ? Number(value) : value];
  }));
}

function describe(key: PublicKey): string {
  const expiry = key.expires_at ?? 'lifetime';
  const usage = `${key.used}/${key.request_limit ?? 'unlimited'}`;
  const own = FIGURES.filter((f) => key[f] !== null).map((f) => `  ${f}=${key[f]}`).join('');
  return `${key.id}  ${key.state.padEnd(9)}  ${key.plan.padEnd(7)}  used ${usage.padEnd(14)}  expires ${expiry}  ${key.name}${own}`;
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [command, id] = positionals;
  const config = loadConfig();
  const log = createLogger('warn');
  let redis: RedisClientType | null = null;
  try {
    if (config.redisUrl) redis = await connectRedis(config.redisUrl, log, { ...config.redis, name: 'REDIS_URL' });
    const store = openKeyStore(config.dataDir, redis);
    switch (command) {
      case 'create': {
        const body: Record<string, unknown> = { name: values.name, plan: values.plan, duration: values.duration, expires_at: values['expires-at'], ...figureFields(values) };
        if (values.limit !== undefined) body.request_limit = limitValue(values.limit);
        const input = parseCreateInput(Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)));
        const { key, record } = await store.create(input);
        // --key-only: the key alone, for a shell variable (KEY=$(npm run -s search-keys -- create ... --key-only)).
        console.log(values['key-only'] ? key : JSON.stringify({ ...publicKey(record), key }, null, 2));
        console.error('The key is shown only now: store it safely.');
        break;
      }
      case 'list': {
        const keys = (await store.list()).map((r) => publicKey(r));
        console.log(values.json ? JSON.stringify(keys, null, 2) : keys.map(describe).join('\n') || 'no keys');
        break;
      }
      case 'update': {
        if (!id) throw new UsageError('update needs a key id');
        if (values.disable && values.enable) throw new UsageError('give --disable or --enable, not both');
        const body: Record<string, unknown> = figureFields(values);
        if (values.disable || values.enable) body.disabled = !!values.disable;
        if (values.plan !== undefined) body.plan = values.plan;
        if (values.limit !== undefined) body.request_limit = limitValue(values.limit);
        if (values['expires-at'] !== undefined) body.expires_at = values['expires-at'] === 'never' ? null : values['expires-at'];
        const patch: KeyPatch = parsePatch(body);
        const record = await store.update(id, patch);
        if (!record) throw new UsageError(`no key ${id}`, 1);
        console.log(describe(publicKey(record)));
        break;
      }
      case 'delete': {
        if (!id) throw new UsageError('delete needs a key id');
        if (!(await store.delete(id))) throw new UsageError(`no key ${id}`, 1);
        console.log(`deleted ${id}`);
        break;
      }
      default:
        throw new UsageError(command ? `unknown command ${command}` : 'no command');
    }
  } finally {
    if (redis?.isOpen) await redis.quit();
  }
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`search-keys: ${error.message}`);
    process.exit(78);
  }
  if (error instanceof UsageError && error.status !== 64) {
    console.error(`search-keys: ${error.message}`);
    process.exit(error.status);
  }
  if (error instanceof UsageError || isApiError(error) || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`search-keys: ${isApiError(error) ? error.detail ?? error.message : (error as Error).message}\n${USAGE}`);
    process.exit(64);
  }
  throw error;
}
