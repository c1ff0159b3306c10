// What the mta tells the operator about each recorded outcome: one log line per recipient (`delivery.delivered`,
// `delivery.deferred`, `delivery.bounced`, `delivery.suppressed`, `delivery.failed`), with the email's request id so
// the line joins the api's `request` line, and the deliveries counter. Only what was written counts: a recipient
// another job took over is that job's to report.
import type { Logger } from '../../shared/logger.ts';
import type { EmailRow } from '../../shared/emails/present.ts';
import type { MtaMetrics } from '../../shared/metrics/mta.ts';
import type { Recorded } from './record.ts';
import type { Attempt } from './types.ts';

export function reportOutcomes(
  deps: { log: Logger; metrics: Pick<MtaMetrics, 'deliveries'> },
  email: Pick<EmailRow, 'id' | 'team_id' | 'request_id'>,
  attempt: Attempt,
  recorded: Recorded[],
): void {
  for (const { recipient, status, response } of recorded) {
    deps.metrics.deliveries.inc({ outcome: status });
    deps.log.info(
      {
        emailId: email.id,
        requestId: email.request_id,
        teamId: email.team_id,
        domain: recipient.domain,
        mx: attempt.mxHost,
        tls: attempt.tls,
        ms: attempt.durationMs,
        // The recipient's attempt number, this one included (record.ts counts it in email_recipients.attempts).
        attempt: recipient.attempts + 1,
        response,
      },
      `delivery.${status}`,
    );
  }
}
