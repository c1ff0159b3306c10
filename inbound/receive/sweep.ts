// What a crash left behind: a message stored (250 given) whose receive job was never enqueued or was lost.
// The job id is the message id, so re-adding one that is still waiting or running is a no-op.
import type { Knex } from 'knex';
import type { Queue } from 'bullmq';

export const SWEEP_EVERY_MS = 60_000;
/** A message younger than this is left to the enqueue that follows its commit. */
const GRACE_MS = 60_000;

export async function enqueueReceive(queue: Queue, messageIds: string[]): Promise<void> {
  // Removed when done either way, so the sweep can re-add a message a failed job left stored.
  await queue.addBulk(
    messageIds.map((messageId) => ({
      name: 'receive',
      data: { messageId },
      opts: { jobId: messageId, removeOnComplete: true, removeOnFail: true },
    })),
  );
}

export async function sweepReceived(db: Knex, queue: Queue, now = new Date()): Promise<number> {
  const rows: { id: string }[] = await db('received_messages')
    .where('status', 'stored')
    .andWhere('received_at', '<', new Date(now.getTime() - GRACE_MS))
    .orderBy('received_at')
    .limit(1000)
    .select('id');
  if (rows.length)
    await enqueueReceive(
      queue,
      rows.map((r) => r.id),
    );
  return rows.length;
}
