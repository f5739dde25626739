// Which built-in skin the game shows for a player without a custom one (docs/upstream.md A6).
import { DEFAULT_SKIN_NAMES, type DefaultSkinName } from './skin-layout.ts';

export interface DefaultSkin { name: DefaultSkinName; slim: boolean }

/** Java's UUID.hashCode(): (int)(x >>> 32) ^ (int)x with x = msb ^ lsb. */
export function javaUuidHash(uuid: string): number {
  const msb = BigInt.asUintN(64, BigInt(`0x${uuid.slice(0, 16)}`));
  const lsb = BigInt.asUintN(64, BigInt(`0x${uuid.slice(16, 32)}`));
  const x = msb ^ lsb;
  return Number(BigInt.asIntN(32, x >> 32n) ^ BigInt.asIntN(32, x));
}

/** Modern client rule: floorMod(hash, 18); 0-8 slim, 9-17 wide, same name order. */
export function defaultSkinFor(uuid: string | null): DefaultSkin {
  if (!uuid) return { name: 'steve', slim: false };
  const h = javaUuidHash(uuid);
  const index = ((h % 18) + 18) % 18;
  return { name: DEFAULT_SKIN_NAMES[index % 9], slim: index < 9 };
}
