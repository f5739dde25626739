// How Floodgate names Bedrock players on a Java server (GeyserMC/Floodgate): the UUID is
// `new UUID(0, xuid)`, so its top 64 bits are zero and the XUID is the low 64 bits; the name is
// the configured prefix, then the gamertag cut to 16 characters in all, its spaces written `_`.
// Gamertags have letters, digits and spaces only, so `_` always stands for a space.

/** A gamertag as a name may carry it (spaces as `_`): at most 16 characters, starting with a letter or digit. */
const GAMERTAG = /^[A-Za-z0-9][A-Za-z0-9 _]{0,15}$/;
const FLOODGATE_UUID = /^0{16}[0-9a-f]{16}$/;
/** The Global API answers XUIDs as JSON numbers; one past 2^53 would lose digits in JSON.parse. */
const MAX_XUID = BigInt(Number.MAX_SAFE_INTEGER);

/** The XUID (decimal) of a Floodgate UUID (32 lower-case hex digits), or null for any other UUID. */
export function xuidOf(uuid: string): string | null {
  if (!FLOODGATE_UUID.test(uuid)) return null;
  const xuid = BigInt(`0x${uuid.slice(16)}`);
  return xuid > 0n && xuid <= MAX_XUID ? xuid.toString() : null;
}

/** The Floodgate UUID of a XUID (a positive safe integer). */
export function floodgateUuid(xuid: number): string {
  return xuid.toString(16).padStart(32, '0');
}

/**
 * The gamertag a name stands for (the prefix, when there, taken off and `_` turned back into
 * spaces), or null when the rest is no gamertag.
 */
export function gamertagOf(name: string, prefix: string): string | null {
  const bare = name.startsWith(prefix) ? name.slice(prefix.length) : name;
  return GAMERTAG.test(bare) ? bare.replaceAll('_', ' ') : null;
}

/** The Java name Floodgate gives a gamertag: the prefix, then the gamertag cut to 16 in all, spaces as `_`. */
export function floodgateName(gamertag: string, prefix: string): string {
  return (prefix + gamertag.slice(0, Math.max(0, 16 - prefix.length))).replaceAll(' ', '_');
}
