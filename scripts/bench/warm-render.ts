// The warm-render walk that loadtest and bench:render-queue share: a player per request, never one
// twice in a measurement, at a new angle each, whose skin and cape the service has fetched first,
// so that each request is one real render and nothing else.

/** A yaw new for 36,000 requests, then a new pitch with it, so no angle repeats within 6.5 million. */
export const newAngle = (k: number) => `yaw=${((k % 36_000) / 100 - 180).toFixed(2)}&pitch=${(Math.floor(k / 36_000) % 181) - 90}`;

/** Player gen_k's render at its own angle. */
export const warmRenderPath = (k: number) => `/v1/render/gen_${k}/180?${newAngle(k)}`;

/**
 * The service's settings for the walk: every player's textures and render stay cached, and fresh.
 * Warming tens of thousands of players takes minutes, past a profile's 5-minute lifetime; a
 * profile refreshed from the fake upstream (in the bench's own process) under load would be
 * measured as the render's cost.
 */
export const warmRenderEnv = (players: number): Record<string, string> => ({
  CACHE_MAX_ENTRIES: String(players * 8), CACHE_MAX_BYTES: String(4 * 1024 ** 3),
  CACHE_TTL_UUID: '86400', CACHE_TTL_PROFILE: '86400',
});

/** Fetches players' skins and capes through the service, 16 at a time, each as a client of its own. */
export async function warmTextures(base: string, players: number[]): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < players.length) {
      const n = players[next++];
      for (const kind of ['skin', 'cape']) {
        const res = await fetch(`${base}/v1/${kind}/gen_${n}`, { headers: { 'x-forwarded-for': `198.19.${(n >> 8) & 255}.${n & 255}` } });
        await res.arrayBuffer();
        if (res.status !== 200 && !(kind === 'cape' && res.status === 404)) throw new Error(`warming gen_${n}: /v1/${kind} answered ${res.status}`);
      }
    }
  }));
}
