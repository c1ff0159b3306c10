// What a report (a DSN, a feedback report, a plain bounce) says about one recipient: the value every reader of
// report.ts answers, in a file of its own so the readers and report.ts do not import each other.

export type FindingKind = 'failed' | 'delayed' | 'complaint' | 'other';

/** What a report says about one recipient. */
export interface Finding {
  kind: FindingKind;
  /** Addresses that may name the recipient, best first (a DSN's Original-Recipient before its Final-Recipient). */
  addresses: string[];
  /** RFC 3463 status code (`5.1.1`), when the report gives one. */
  status: string | null;
  /** The reporting MTA's diagnostic as written (`smtp; 550 5.1.1 ...`), when it gives one. */
  diagnostic: string | null;
  /** For the log: the DSN Action, the ARF Feedback-Type, the format's own words. */
  detail: string;
}
