// MAC addresses (EUI-48) and EUI-64 identifiers in every common notation: colon, dash or space
// separated (leading zeros may be left out, as BSD and macOS tools print them), Cisco dotted
// groups of four, or bare hex. The value is lower-case colon form.

const SEPARATED = /^[0-9a-f]{1,2}([:\- ])[0-9a-f]{1,2}(?:\1[0-9a-f]{1,2}){4}(?:(?:\1[0-9a-f]{1,2}){2})?$/;
const DOTTED = /^[0-9a-f]{4}(?:\.[0-9a-f]{4}){2,3}$/;
const BARE = /^(?:[0-9a-f]{12}|[0-9a-f]{16})$/;

/** Eight two-digit groups: an EUI-64, though the text is also a valid IPv6 address. */
export const EUI64_TEXT = /^[0-9a-f]{2}([:-])[0-9a-f]{2}(?:\1[0-9a-f]{2}){6}$/i;
/** Space-separated groups with a hex letter (all-digit ones read as phone numbers). */
export const SPACED_MAC_TEXT = /^(?=.*[a-f])[0-9a-f]{1,2}(?: [0-9a-f]{1,2}){5}(?:(?: [0-9a-f]{1,2}){2})?$/i;

export function normaliseMac(raw: string): string | null {
  const text = raw.trim().toLowerCase();
  const separated = SEPARATED.exec(text);
  if (separated) return text.split(separated[1]).map((g) => g.padStart(2, '0')).join(':');
  if (!DOTTED.test(text) && !BARE.test(text)) return null;
  return text.replaceAll('.', '').match(/../g)!.join(':');
}
