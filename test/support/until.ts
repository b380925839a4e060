/**
 * Polls `probe` until it returns a value, or fails after `deadlineMs`: a condition with a deadline, never a sleep.
 * `undefined` and `false` mean "not yet"; anything else is the value awaited. `everyMs` is the pause between polls.
 */
export async function until<T>(
  what: string,
  deadlineMs: number,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
