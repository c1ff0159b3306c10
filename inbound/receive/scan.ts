// Virus scanning of a received message: the raw source as received goes to clamd whole, so every MIME part
// (clamd decodes mail itself, ScanMail) and anything mailparser would not read is scanned once.
//
// A scan that did not happen is never a verdict: when clamd is configured but unreachable (down, restarting,
// answering garbage, or refusing the stream for its StreamMaxLength) the job fails with ScanUnavailableError
// and the message stays `stored`. The queue retries it (attempts with backoff), then the receive sweep
// re-enqueues it every minute until clamd is back: mail waits, it is never dropped or let through unscanned.
import type { ClamdScanner } from '../../shared/clamd/client.ts';

export type ScanVerdict = { state: 'off' } | { state: 'clean' } | { state: 'virus'; viruses: string[] };

export class ScanUnavailableError extends Error {
  constructor(address: string, cause: unknown) {
    super(`clamd at ${address} could not scan the message: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'ScanUnavailableError';
  }
}

/** `scanner` null: CLAMD_ADDRESS is unset and scanning is off. */
export async function scanMessage(scanner: ClamdScanner | null, raw: Buffer): Promise<ScanVerdict> {
  if (!scanner) return { state: 'off' };
  let outcome;
  try {
    outcome = await scanner.scan(raw);
  } catch (err) {
    throw new ScanUnavailableError(scanner.address, err);
  }
  return outcome.infected ? { state: 'virus', viruses: outcome.viruses } : { state: 'clean' };
}
