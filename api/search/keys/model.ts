// API keys: the stored record, its state, and the validation of create and update requests that
// the admin API and the CLI share. Only a hash of a key is stored; the key is shown once.
import { createHash, randomBytes } from 'node:crypto';
import { ApiError } from '../../../shared/errors.ts';
import { FIGURES, figureRule, figureValue, PLANS, type Figure, type Plan } from '../plans.ts';

export { PLANS, type Plan };

/** A key's own figures, each replacing its plan's (api/search/plans.ts); null = the plan's. */
export type KeyOverrides = Record<Figure, number | null>;

/** The overrides are absent from records made before keys had them: read as null. */
export interface KeyRecord extends Partial<KeyOverrides> {
  id: string;
  name: string;
  plan: Plan;
  created_at: string;
  /** ISO time (always Date#toISOString, so text order is time order); null = lifetime. */
  expires_at: string | null;
  /** Successful searches allowed in total; null = unlimited. */
  request_limit: number | null;
  used: number;
  disabled: boolean;
  /** sha256 of the key, hex. */
  hash: string;
}

export type KeyState = 'active' | 'disabled' | 'expired' | 'exhausted';

/** The record as the admin API and CLI show it: no hash, plus its state. */
export type PublicKey = Omit<KeyRecord, 'hash'> & KeyOverrides & { state: KeyState };

export interface CreateKeyInput extends Partial<KeyOverrides> { name: string; plan: Plan; expires_at: string | null; request_limit: number | null }
export interface KeyPatch extends Partial<KeyOverrides> { disabled?: boolean; plan?: Plan; request_limit?: number | null; expires_at?: string | null }

/** What a request made with a key gets: allowed (and counted), or the reason it is refused. */
export type ConsumeResult = { state: 'active'; record: KeyRecord } | { state: Exclude<KeyState, 'active'> | 'unknown'; record?: KeyRecord };

// 256 random bits: guessing is hopeless, so a fast unsalted hash is enough to keep stored keys useless.
export function generateKey(): string {
  return `sk_${randomBytes(32).toString('base64url')}`;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function newKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

/** Checked in this order: disabled, expired, exhausted. The Redis script mirrors this rule. */
export function keyState(record: KeyRecord, now: Date = new Date()): KeyState {
  if (record.disabled) return 'disabled';
  if (record.expires_at !== null && record.expires_at <= now.toISOString()) return 'expired';
  if (record.request_limit !== null && record.used >= record.request_limit) return 'exhausted';
  return 'active';
}

/**
 * Counts `count` uses when the key is active and has that many left (mutates the record); returns
 * the state it was in, `exhausted` with nothing counted when fewer are left. The Redis script
 * mirrors this rule.
 */
export function consumeRecord(record: KeyRecord, now: Date = new Date(), count = 1): KeyState {
  const state = keyState(record, now);
  if (state !== 'active') return state;
  if (record.request_limit !== null && record.used + count > record.request_limit) return 'exhausted';
  record.used += count;
  return state;
}

/** Uses left; null = unlimited. */
export const usesLeft = (record: KeyRecord): number | null => (record.request_limit === null ? null : Math.max(0, record.request_limit - record.used));

export function applyPatch(record: KeyRecord, patch: KeyPatch): void {
  Object.assign(record, Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)));
}

const overridesOf = (record: Partial<KeyOverrides>) => Object.fromEntries(FIGURES.map((f) => [f, record[f] ?? null])) as KeyOverrides;

export function publicKey(record: KeyRecord, now: Date = new Date()): PublicKey {
  const { hash: _hash, ...rest } = record;
  return { ...rest, ...overridesOf(record), state: keyState(record, now) };
}

export function newRecord(input: CreateKeyInput, key: string, now: Date = new Date()): KeyRecord {
  return {
    id: newKeyId(), name: input.name, plan: input.plan, created_at: now.toISOString(), expires_at: input.expires_at, request_limit: input.request_limit, used: 0, disabled: false,
    ...overridesOf(input), hash: hashKey(key),
  };
}

const bad = (detail: string) => new ApiError('bad_request', { detail });

/** "lifetime" or a count and unit: h (hours), d (days), w (weeks), m (months), y (years). */
export function expiryFromDuration(duration: string, now: Date = new Date()): string | null {
  if (duration === 'lifetime') return null;
  const match = /^(\d{1,4})([hdwmy])$/.exec(duration);
  if (!match) throw bad('duration must be "lifetime" or a number with h, d, w, m (months) or y, e.g. "2m"');
  const n = Number(match[1]);
  if (n < 1) throw bad('duration must be at least 1');
  const at = new Date(now);
  switch (match[2]) {
    case 'h': at.setUTCHours(at.getUTCHours() + n); break;
    case 'd': at.setUTCDate(at.getUTCDate() + n); break;
    case 'w': at.setUTCDate(at.getUTCDate() + 7 * n); break;
    case 'm': at.setUTCMonth(at.getUTCMonth() + n); break;
    case 'y': at.setUTCFullYear(at.getUTCFullYear() + n); break;
  }
  return at.toISOString();
}

function parseExpiresAt(value: unknown): string | null {
  if (value === null) return null;
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(Date.parse(value))) {
    throw bad('expires_at must be an ISO 8601 time (or null for no expiry)');
  }
  return new Date(value).toISOString();
}

function parseLimit(value: unknown): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw bad('request_limit must be a positive integer (or null for unlimited)');
  return value;
}

/** A key's own figure: within the figure's bounds, or null for its plan's. */
function parseOverride(figure: Figure, value: unknown): number | null {
  if (value === null) return null;
  const parsed = figureValue(figure, value);
  if (parsed === undefined) throw bad(`${figure} must be ${figureRule(figure)} (or null for the plan's)`);
  return parsed;
}

/** The overrides `input` names, checked. */
function parseOverrides(input: Record<string, unknown>): Partial<KeyOverrides> {
  return Object.fromEntries(FIGURES.filter((f) => input[f] !== undefined).map((f) => [f, parseOverride(f, input[f])]));
}

function parsePlan(value: unknown): Plan {
  if (!(PLANS as readonly unknown[]).includes(value)) throw bad(`plan must be one of ${PLANS.join(', ')}`);
  return value as Plan;
}

function asObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('the body must be a JSON object');
  return body as Record<string, unknown>;
}

function rejectUnknown(body: Record<string, unknown>, allowed: readonly string[]): void {
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length) throw bad(`unknown field(s): ${unknown.join(', ')} (allowed: ${allowed.join(', ')})`);
}

export function parseCreateInput(body: unknown, now: Date = new Date()): CreateKeyInput {
  const input = asObject(body);
  rejectUnknown(input, ['name', 'plan', 'expires_at', 'duration', 'request_limit', ...FIGURES]);
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (!name || name.length > 100) throw bad('name is required (1-100 characters)');
  const plan = parsePlan(input.plan ?? 'basic');
  if (input.expires_at !== undefined && input.duration !== undefined) throw bad('give expires_at or duration, not both');
  let expires_at: string | null = null;
  if (input.expires_at !== undefined) expires_at = parseExpiresAt(input.expires_at);
  else if (input.duration !== undefined) {
    if (typeof input.duration !== 'string') throw bad('duration must be a string');
    expires_at = expiryFromDuration(input.duration, now);
  }
  const request_limit = input.request_limit === undefined ? null : parseLimit(input.request_limit);
  return { name, plan, expires_at, request_limit, ...parseOverrides(input) };
}

export function parsePatch(body: unknown): KeyPatch {
  const input = asObject(body);
  const fields = ['disabled', 'plan', 'request_limit', 'expires_at', ...FIGURES];
  rejectUnknown(input, fields);
  const patch: KeyPatch = parseOverrides(input);
  if (input.disabled !== undefined) {
    if (typeof input.disabled !== 'boolean') throw bad('disabled must be true or false');
    patch.disabled = input.disabled;
  }
  if (input.plan !== undefined) patch.plan = parsePlan(input.plan);
  if (input.request_limit !== undefined) patch.request_limit = parseLimit(input.request_limit);
  if (input.expires_at !== undefined) patch.expires_at = parseExpiresAt(input.expires_at);
  if (Object.keys(patch).length === 0) throw bad(`nothing to change (${fields.join(', ')})`);
  return patch;
}
