// API keys: the stored record, its state, and the validation of create and update requests that
// the admin API and the CLI share. Only a hash of a key is stored; the key is shown once.
import { createHash, randomBytes } from 'node:crypto';
import { ApiError } from '../../../shared/errors.ts';

export const PLANS = ['basic', 'premium'] as const;
export type Plan = typeof PLANS[number];

export interface KeyRecord {
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
export type PublicKey = Omit<KeyRecord, 'hash'> & { state: KeyState };

export interface CreateKeyInput { name: string; plan: Plan; expires_at: string | null; request_limit: number | null }
export interface KeyPatch { disabled?: boolean; request_limit?: number | null; expires_at?: string | null }

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

/** Counts one use when the key is active (mutates the record); returns the state it was in. */
export function consumeRecord(record: KeyRecord, now: Date = new Date()): KeyState {
  const state = keyState(record, now);
  if (state === 'active') record.used += 1;
  return state;
}

export function applyPatch(record: KeyRecord, patch: KeyPatch): void {
  if (patch.disabled !== undefined) record.disabled = patch.disabled;
  if (patch.request_limit !== undefined) record.request_limit = patch.request_limit;
  if (patch.expires_at !== undefined) record.expires_at = patch.expires_at;
}

export function publicKey(record: KeyRecord, now: Date = new Date()): PublicKey {
  const { hash: _hash, ...rest } = record;
  return { ...rest, state: keyState(record, now) };
}

export function newRecord(input: CreateKeyInput, key: string, now: Date = new Date()): KeyRecord {
  return { id: newKeyId(), name: input.name, plan: input.plan, created_at: now.toISOString(), expires_at: input.expires_at, request_limit: input.request_limit, used: 0, disabled: false, hash: hashKey(key) };
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
  rejectUnknown(input, ['name', 'plan', 'expires_at', 'duration', 'request_limit']);
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (!name || name.length > 100) throw bad('name is required (1-100 characters)');
  const plan = input.plan ?? 'basic';
  if (!(PLANS as readonly unknown[]).includes(plan)) throw bad(`plan must be one of ${PLANS.join(', ')}`);
  if (input.expires_at !== undefined && input.duration !== undefined) throw bad('give expires_at or duration, not both');
  let expires_at: string | null = null;
  if (input.expires_at !== undefined) expires_at = parseExpiresAt(input.expires_at);
  else if (input.duration !== undefined) {
    if (typeof input.duration !== 'string') throw bad('duration must be a string');
    expires_at = expiryFromDuration(input.duration, now);
  }
  const request_limit = input.request_limit === undefined ? null : parseLimit(input.request_limit);
  return { name, plan: plan as Plan, expires_at, request_limit };
}

export function parsePatch(body: unknown): KeyPatch {
  const input = asObject(body);
  rejectUnknown(input, ['disabled', 'request_limit', 'expires_at']);
  const patch: KeyPatch = {};
  if (input.disabled !== undefined) {
    if (typeof input.disabled !== 'boolean') throw bad('disabled must be true or false');
    patch.disabled = input.disabled;
  }
  if (input.request_limit !== undefined) patch.request_limit = parseLimit(input.request_limit);
  if (input.expires_at !== undefined) patch.expires_at = parseExpiresAt(input.expires_at);
  if (Object.keys(patch).length === 0) throw bad('nothing to change (disabled, request_limit, expires_at)');
  return patch;
}
