// The machine-readable part of an RFC 3464 delivery status notification (message/delivery-status): one group
// of per-message fields, then one group per recipient (§2.1). Pure.
import { fieldGroups, first, typedAddress } from './report-fields.ts';
import type { Finding } from './finding.ts';

/** RFC 3464 §2.3.4 / RFC 3463 §2: class.subject.detail, leading zeros dropped. */
export function statusCode(value: string | null): string | null {
  const m = /^\s*([245])\.(\d{1,3})\.(\d{1,3})\b/.exec(value ?? '');
  return m ? `${m[1]}.${Number(m[2])}.${Number(m[3])}` : null;
}

export function readDsn(text: string): Finding[] {
  // A recipient group is one with a Final-Recipient (required, §2.3.2); the per-message group has none.
  return fieldGroups(text)
    .filter((g) => g.has('final-recipient'))
    .map((g) => {
      const action = (first(g, 'action') ?? '').toLowerCase().trim();
      // Original-Recipient (§2.3.1) is the address as we gave it; Final-Recipient may be one an alias led to.
      const addresses = [
        typedAddress(first(g, 'original-recipient')),
        typedAddress(first(g, 'final-recipient')),
      ].filter((a): a is string => a !== null);
      return {
        // §2.3.3: failed | delayed | delivered | relayed | expanded; only the first two concern us.
        kind: action === 'failed' ? 'failed' : action === 'delayed' ? 'delayed' : 'other',
        addresses,
        status: statusCode(first(g, 'status')),
        diagnostic: first(g, 'diagnostic-code'),
        detail: `action ${action || 'missing'}`,
      } satisfies Finding;
    });
}
