// Signing keys. RSA-4096 generation takes half a second on an idle machine and several on a
// busy one, longer than a short upstream timeout: so a key is made once per machine (kept under
// the temp directory: it signs fake profiles, nothing else), loaded before the fake listens, and
// shared by every fake started in that process.
import { createPrivateKey, createPublicKey, createSign, generateKeyPair, type KeyObject } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

export interface SigningKey {
  privateKey: KeyObject;
  /** SPKI PEM, as Yggdrasil metadata publishes it. */
  publicPem: string;
}

const generate = promisify(generateKeyPair);
const cache = new Map<string, Promise<SigningKey>>();
const KEY_DIR = path.join(os.tmpdir(), 'skinfarm-fake-upstream-keys');

function fromPrivate(privateKey: KeyObject): SigningKey {
  return { privateKey, publicPem: createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString() };
}

async function loadOrMake(source: 'official' | 'external'): Promise<SigningKey> {
  const bits = source === 'external' ? 4096 : 2048;
  const file = path.join(KEY_DIR, `${source}-${bits}.pem`);
  try {
    return fromPrivate(createPrivateKey(await readFile(file, 'utf8')));
  } catch {
    const { privateKey } = await generate('rsa', { modulusLength: bits });
    // Written under another name first: a concurrent reader never sees half a key.
    const partial = `${file}.${process.pid}.tmp`;
    await mkdir(KEY_DIR, { recursive: true });
    await writeFile(partial, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    await rename(partial, file);
    return fromPrivate(privateKey);
  }
}

/** The key for one upstream ("official" is 2048 bits, "external" 4096 like Blessing Skin requires). */
export function signingKey(source: 'official' | 'external'): Promise<SigningKey> {
  let key = cache.get(source);
  if (!key) {
    key = loadOrMake(source);
    cache.set(source, key);
  }
  return key;
}

/** Base64 SHA1withRSA over the property value string, as Mojang and Blessing Skin sign. */
export function signValue(key: SigningKey, value: string): string {
  return createSign('RSA-SHA1').update(value).sign(key.privateKey, 'base64');
}
