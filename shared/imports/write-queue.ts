// Batches written one after another, in file order, while the reader keeps reading: the parse (the worker's CPU)
// and the writes (PostgreSQL's) overlap, the reader up to `ahead` batches ahead of the write in progress. A write
// that fails stops every later one (they never run) and is thrown to the reader at its next push, or by drain().
export class WriteQueue {
  private last: Promise<void> = Promise.resolve();
  private readonly queued: Promise<void>[] = [];

  constructor(private readonly ahead: number) {}

  /** Queues `write` after the writes queued before it; resolves once fewer than `ahead` wait. */
  async push(write: () => Promise<void>): Promise<void> {
    const next = this.last.then(write);
    next.catch(() => {}); // thrown by a later push or drain(), never an unhandled rejection meanwhile
    this.last = next;
    this.queued.push(next);
    while (this.queued.length > this.ahead) await this.queued.shift();
  }

  /** Waits for every queued write; rejects with the first failure. */
  async drain(): Promise<void> {
    this.queued.length = 0;
    await this.last;
  }
}
