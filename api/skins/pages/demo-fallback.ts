// The landing page's live example must show a figure even when the upstreams cannot be reached
// (`npm start` without network): image requests for DEMO_PLAYER whose lookup fails upstream are
// drawn with a built-in default skin instead. Any other player, every JSON endpoint, and a demo
// player that does not exist still answer the failure.
import { ApiError, type ErrorCode } from '../../../shared/errors.ts';
import type { RawProfile } from '../types.ts';

const UPSTREAM_FAILURES: ReadonlySet<ErrorCode> = new Set(['upstream_error', 'upstream_timeout', 'upstream_busy']);
/** A UUID whose default skin is the classic Steve-like one (renderer/default-skins.ts). */
const FALLBACK_ID = '0000000000000000000000000000000f';

/** The profile to draw, and whether it is the stand-in (then nobody may cache the image). */
export async function profileOrDemoFallback(
  name: string, demoPlayer: string, find: () => Promise<RawProfile>,
): Promise<{ profile: RawProfile; fallback: ErrorCode | null }> {
  try {
    return { profile: await find(), fallback: null };
  } catch (error) {
    const isDemo = name.toLowerCase() === demoPlayer.toLowerCase();
    if (!isDemo || !(error instanceof ApiError) || !UPSTREAM_FAILURES.has(error.code)) throw error;
    return { profile: { id: FALLBACK_ID, name: demoPlayer, properties: [], source: 'official' }, fallback: error.code };
  }
}
