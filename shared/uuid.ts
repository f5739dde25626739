// UUIDs travel as 32 lower-case hex digits; the dashed 8-4-4-4-12 form is only for display.

const UUID_RE = /^[0-9a-f]{32}$/;
const DASHED_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The undashed lower-case form, or null when the text is not a UUID. */
export function normalizeUuid(text: string): string | null {
  const lower = text.toLowerCase();
  if (UUID_RE.test(lower)) return lower;
  if (DASHED_RE.test(lower)) return lower.replaceAll('-', '');
  return null;
}

/** Looks like a UUID attempt (hex and dashes only, 32+ characters) rather than a name. */
export function looksLikeUuid(text: string): boolean {
  return text.length >= 32 && /^[0-9a-fA-F-]+$/.test(text);
}

export function dashUuid(uuid: string): string {
  return `${uuid.slice(0, 8)}-${uuid.slice(8, 12)}-${uuid.slice(12, 16)}-${uuid.slice(16, 20)}-${uuid.slice(20)}`;
}
