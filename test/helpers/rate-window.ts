/**
 * Rate-limit windows are 60 s, aligned to the clock (api/http/rate-limit.ts). A test that counts
 * a burst waits for the next window when fewer than `needMs` are left in this one, so the whole
 * burst counts into one window and a rollover can neither fail it nor excuse it.
 */
export async function startInOneWindow(needMs = 15_000): Promise<void> {
  const leftMs = 60_000 - (Date.now() % 60_000);
  if (leftMs < needMs) await new Promise((resolve) => setTimeout(resolve, leftMs + 100));
}
