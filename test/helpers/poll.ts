/** Polls until `check` holds of what `probe` reads (a change another process makes); fails after `ms`. */
export async function until<T>(what: string, probe: () => Promise<T>, check: (value: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not seen in ${ms} ms (last: ${JSON.stringify(value).slice(0, 300)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
