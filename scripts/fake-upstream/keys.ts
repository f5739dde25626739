// Signing keys. RSA-4096 generation takes about half a second, so each key is made once per
// process, on first use, off the main thread, and shared by every fake started in that process.
import { createSign, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

export interface SigningKey {
  privateKey: KeyObject;
  /** SPKI PEM, as Yggdrasil metadata publishes it. */
  publicPem: string;
}

const generate = promisify(generateKeyPair);
const cache = new Map<string, Promise<SigningKey>>();

/** The process-wide key for one upstream ("official" is 2048 bits, "external" 4096 like Blessing Skin requires). */
export function signingKey(source: 'official' | 'external'): Promise<SigningKey> {
  let key = cache.get(source);
  if (!key) {
    key = generate('rsa', { modulusLength: source === 'external' ? 4096 : 2048 }).then(({ privateKey, publicKey }) => ({
      privateKey,
      publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    }));
    cache.set(source, key);
  }
  return key;
}

/** Base64 SHA1withRSA over the property value string, as Mojang and Blessing Skin sign. */
export function signValue(key: SigningKey, value: string): string {
  return createSign('RSA-SHA1').update(value).sign(key.privateKey, 'base64');
}
