// Keys in Redis: one JSON document per key, a hash-to-id index and a set of ids. Checking and
// counting a key is one Lua script, so any number of instances count every use exactly once.
import type { RedisClientType } from '@redis/client';
import { generateKey, hashKey, keyState, newRecord, type ConsumeResult, type CreateKeyInput, type KeyPatch, type KeyRecord } from './model.ts';
import type { KeyStore } from './store.ts';

const PREFIX = 'skinfarm:search:';
const recordKey = (id: string) => `${PREFIX}key:${id}`;
const hashIndexKey = (hash: string) => `${PREFIX}keyhash:${hash}`;
const ID_SET = `${PREFIX}keys`;

// The rule of model.ts keyState/consumeRecord, in Lua: ARGV[2] uses counted together, or none
// when fewer are left. expires_at values are toISOString() text, so comparing them with the
// current time as text compares times.
const CONSUME_SCRIPT = `
local raw = redis.call('GET', KEYS[1])
if not raw then return '{"state":"unknown"}' end
local rec = cjson.decode(raw)
local state = 'active'
if rec.disabled then state = 'disabled'
elseif rec.expires_at ~= cjson.null and rec.expires_at <= ARGV[1] then state = 'expired'
elseif rec.request_limit ~= cjson.null and rec.used + tonumber(ARGV[2]) > rec.request_limit then state = 'exhausted'
else
  rec.used = rec.used + tonumber(ARGV[2])
  raw = cjson.encode(rec)
  redis.call('SET', KEYS[1], raw)
end
return '{"state":"' .. state .. '","record":' .. raw .. '}'`;

// Read-modify-write in one step so a concurrent consume's count is never overwritten.
const PATCH_SCRIPT = `
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
local rec = cjson.decode(raw)
for field, value in pairs(cjson.decode(ARGV[1])) do rec[field] = value end
raw = cjson.encode(rec)
redis.call('SET', KEYS[1], raw)
return raw`;

export class RedisKeyStore implements KeyStore {
  readonly backend = 'redis' as const;
  private readonly redis: RedisClientType;

  constructor(redis: RedisClientType) {
    this.redis = redis;
  }

  async create(input: CreateKeyInput): Promise<{ key: string; record: KeyRecord }> {
    const key = generateKey();
    const record = newRecord(input, key);
    await this.redis.multi()
      .set(recordKey(record.id), JSON.stringify(record))
      .set(hashIndexKey(record.hash), record.id)
      .sAdd(ID_SET, record.id)
      .exec();
    return { key, record };
  }

  async list(): Promise<KeyRecord[]> {
    const ids = await this.redis.sMembers(ID_SET);
    if (ids.length === 0) return [];
    const docs = await this.redis.mGet(ids.map(recordKey));
    return docs.filter((d): d is string => typeof d === 'string').map((d) => JSON.parse(d) as KeyRecord)
      .sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  async update(id: string, patch: KeyPatch): Promise<KeyRecord | null> {
    const raw = await this.redis.eval(PATCH_SCRIPT, { keys: [recordKey(id)], arguments: [JSON.stringify(patch)] });
    return typeof raw === 'string' ? JSON.parse(raw) as KeyRecord : null;
  }

  async delete(id: string): Promise<boolean> {
    const raw = await this.redis.get(recordKey(id));
    if (raw === null) return false;
    const record = JSON.parse(raw) as KeyRecord;
    await this.redis.multi().del(recordKey(id)).del(hashIndexKey(record.hash)).sRem(ID_SET, id).exec();
    return true;
  }

  async peek(key: string): Promise<ConsumeResult> {
    const id = await this.redis.get(hashIndexKey(hashKey(key)));
    const raw = id === null ? null : await this.redis.get(recordKey(id));
    if (raw === null) return { state: 'unknown' };
    const record = JSON.parse(raw) as KeyRecord;
    return { state: keyState(record), record } as ConsumeResult;
  }

  async consume(key: string, count = 1): Promise<ConsumeResult> {
    const id = await this.redis.get(hashIndexKey(hashKey(key)));
    if (id === null) return { state: 'unknown' };
    const raw = await this.redis.eval(CONSUME_SCRIPT, { keys: [recordKey(id)], arguments: [new Date().toISOString(), String(count)] });
    return JSON.parse(String(raw)) as ConsumeResult;
  }
}
