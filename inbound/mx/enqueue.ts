// Receive jobs leave the MX in batches. The 250 does not wait for them (the row is committed, and the sweep
// re-enqueues a message whose job was never added), and while one addBulk is in flight the ids stored meanwhile
// wait and go together in the next: under load one Redis round trip (one MULTI) carries many messages instead
// of one each. With `delayMs` (the MX thread: 20 ms, as the api's and the submission's deliver jobs) a batch also
// waits that long for company, so under load a pipeline carries ~20 ms of messages; with 0 an idle listener adds
// a message's job at once.
export type Enqueue = (messageIds: string[]) => Promise<void>;

/** At most this many jobs in one addBulk. */
const MAX_BATCH = 500;

export function batchedEnqueue(
  enqueue: Enqueue,
  onError: (err: unknown, messageIds: string[]) => void,
  options: { delayMs?: number } = {},
): (messageIds: string[]) => void {
  const delayMs = options.delayMs ?? 0;
  let pending: string[] = [];
  let busy = false;
  let timer: NodeJS.Timeout | null = null;
  // The next batch: at once without a delay; with one, `delayMs` after the first id waiting (or after the batch in
  // flight returns, if that is later). A shutdown meanwhile leaves the ids to the sweep, as a failed enqueue does.
  const schedule = () => {
    if (busy || timer || pending.length === 0) return;
    if (delayMs === 0) flush();
    else timer = setTimeout(flush, delayMs).unref();
  };
  const flush = () => {
    timer = null;
    const ids = pending.slice(0, MAX_BATCH);
    pending = pending.slice(MAX_BATCH);
    busy = true;
    Promise.resolve()
      .then(() => enqueue(ids))
      .catch((err) => onError(err, ids))
      .finally(() => {
        busy = false;
        schedule();
      });
  };
  return (messageIds) => {
    pending.push(...messageIds);
    schedule();
  };
}
