// The machine-readable part of an RFC 5965 feedback report (message/feedback-report, §3): one field group.
// Pure.
import { fieldGroups, first, typedAddress } from './report-fields.ts';
import type { Finding } from './finding.ts';

/**
 * Feedback types that are a recipient's complaint about the mail (RFC 5965 §7.3): abuse (spam), fraud, virus.
 * `not-spam` is the opposite, `auth-failure` (RFC 6591) a report on our authentication, and `other` says
 * nothing we may act on by suppressing the address: those are logged, not recorded.
 */
const COMPLAINTS = new Set(['abuse', 'fraud', 'virus']);

export function readArf(text: string): Finding[] {
  const fields = fieldGroups(text)[0] ?? new Map<string, string[]>();
  const type = (first(fields, 'feedback-type') ?? '').toLowerCase().trim();
  const kind = COMPLAINTS.has(type) ? 'complaint' : 'other';
  const detail = `feedback-type ${type || 'missing'}`;
  // Original-Rcpt-To (§3.2, optional, may repeat): the recipients at the reporting domain, each a complainer.
  const rcpts = (fields.get('original-rcpt-to') ?? []).map(typedAddress).filter((a): a is string => a !== null);
  if (rcpts.length === 0) return [{ kind, addresses: [], status: null, diagnostic: null, detail }];
  return rcpts.map((address) => ({ kind, addresses: [address], status: null, diagnostic: null, detail }));
}
