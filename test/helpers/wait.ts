// The one way tests wait for something to happen: poll a check until it answers, with a deadline that fails the
// test by name. A fixed sleep proves only that a machine was fast enough once; this waits as long as needed and
// no longer.

export interface UntilOptions {
  /** Fails after this long (default 10 s). */
  timeoutMs?: number;
  /** Pause between checks (default 20 ms). */
  intervalMs?: number;
  /** Named in the timeout's error. */
  what?: string;
  /** A check that throws is taken as "not yet" (a server still starting), not as a failure. */
  ignoreErrors?: boolean;
}

const waitFor = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` until it answers something other than undefined, null or false, and answers that. On timeout,
 * throws an Error naming `what` and the last answer (or error) seen.
 */
export async function until<T>(
  check: () => T | Promise<T>,
  options: UntilOptions = {},
): Promise<Exclude<T, undefined | null | false>> {
  const { timeoutMs = 10_000, intervalMs = 20, what = 'a condition', ignoreErrors = false } = options;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      last = await check();
      if (last !== undefined && last !== null && last !== false) return last as Exclude<T, undefined | null | false>;
    } catch (err) {
      if (!ignoreErrors) throw err;
      last = err;
    }
    if (Date.now() > deadline) {
      const seen = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last seen: ${seen})`);
    }
    await waitFor(intervalMs);
  }
}
