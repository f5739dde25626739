// What a typed value is found by, for both backends (the in-memory index and the PostgreSQL
// import read the same rules from here, so they cannot drift): the lookup keys a row's value
// posts (its identity, plus derived keys: the SHA-256 of an e-mail address or phone number, an
// address's domain), the key a query looks up, the terms a prefix query ranges over, and the
// check that a row found by a key really holds what was asked (keys are fingerprints, and a
// derived key is not a value of the row).
import { createHash } from 'node:crypto';
import { typedKey, type SearchType, type TypedValue } from './types.ts';

/** The hashed type answering for each type whose digest is posted. */
const HASHED: Partial<Record<SearchType, SearchType>> = { email: 'email_sha256', phone: 'phone_sha256' };
const HASHED_OF = new Map(Object.entries(HASHED).map(([plain, hashed]) => [hashed, plain as SearchType]));

/** Types whose values a `prefix*` query finds (their normalised form, matched whatever the case). */
export const PREFIX_TYPES: readonly SearchType[] = ['network_user', 'messenger_user', 'fio'];

/** SHA-256 in hex of a value's normalised text (UTF-8): what a client sends instead of the value. */
export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** The domain of a normalised address; null for an address literal (user@[192.0.2.1]). */
export function emailDomain(address: string): string | null {
  const domain = address.slice(address.lastIndexOf('@') + 1);
  return domain.startsWith('[') ? null : domain;
}

/** The key under which an e-mail address is posted for `*@domain` (no value of any type looks so). */
const domainKey = (domain: string) => `email@${domain}`;

/**
 * Every key a row's typed value is posted under: its identity, then the derived lookup keys
 * (those find the row, but are none of its entities).
 */
export function postedKeys(value: TypedValue): string[] {
  const keys = [typedKey(value)];
  const hashed = HASHED[value.type];
  if (hashed) keys.push(typedKey({ type: hashed, value: sha256Hex(value.value) }));
  if (value.type === 'email') {
    const domain = emailDomain(value.value);
    if (domain) keys.push(domainKey(domain));
  }
  return keys;
}

/** The key a query looks up; a prefix query has none (it ranges over `term`s). */
export function queryKey(query: TypedValue): string {
  if (query.match === 'prefix') throw new Error('a prefix query has no single key');
  return query.match === 'domain' ? domainKey(query.value) : typedKey(query);
}

/** A value's prefix term (what a prefix is compared with); null for a type without prefixes. */
export function term(value: TypedValue): string | null {
  return PREFIX_TYPES.includes(value.type) ? typedKey(value) : null;
}

/** The term a prefix query's matches start with. */
export const prefixTerm = (query: TypedValue): string => typedKey(query);

/** Whether a row's own values hold what the query asks (settles a shared fingerprint or a derived key). */
export function holds(entities: readonly TypedValue[], query: TypedValue): boolean {
  if (query.match === 'domain') return entities.some((e) => e.type === 'email' && emailDomain(e.value) === query.value);
  if (query.match === 'prefix') {
    const start = prefixTerm(query);
    return entities.some((e) => e.type === query.type && typedKey(e).startsWith(start));
  }
  const plain = HASHED_OF.get(query.type);
  if (plain) return entities.some((e) => e.type === plain && sha256Hex(e.value) === query.value);
  const wanted = typedKey(query);
  return entities.some((e) => typedKey(e) === wanted);
}
