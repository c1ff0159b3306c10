// Receive jobs leave the MX in batches. The 250 does not wait for them (the row is committed, and the sweep
// re-enqueues a message whose job was never added), and while one addBulk is in flight the ids stored meanwhile
// wait and go together in the next: under load one Redis round trip (one MULTI) carries many messages instead
// of one each; an idle listener still adds a message's job at once.
export type Enqueue = (messageIds: string[]) => Promise<void>;

/** At most this many jobs in one addBulk. */
const MAX_BATCH = 500;

export function batchedEnqueue(
  enqueue: Enqueue,
  onError: (err: unknown, messageIds: string[]) => void,
): (messageIds: string[]) => void {
  let pending: string[] = [];
  let busy = false;
  const flush = () => {
    if (busy || pending.length === 0) return;
    const ids = pending.slice(0, MAX_BATCH);
    pending = pending.slice(MAX_BATCH);
    busy = true;
    Promise.resolve()
      .then(() => enqueue(ids))
      .catch((err) => onError(err, ids))
      .finally(() => {
        busy = false;
        flush();
      });
  };
  return (messageIds) => {
    pending.push(...messageIds);
    flush();
  };
}
