// What a reported failure means, by the same rules the MTA applies to a reply it gets itself
// (shared/bounces/rules.ts): the remote MTA's quoted reply when the report has one (`smtp; 550 5.1.1 ...`),
// else a reply made of the RFC 3463 status code and the diagnostic text.
import { classify, parseReply, type Reply } from '../../shared/bounces/classify.ts';
import type { BounceSubType, BounceType } from '../../shared/bounces/rules.ts';
import { bounceMessage } from '../../shared/bounces/messages.ts';

export interface ReportedBounce {
  type: BounceType;
  subType: BounceSubType;
  /** email.bounced's bounce.message. */
  message: string;
  /** email.bounced's bounce.diagnosticCode: the report's Diagnostic-Code as written. */
  diagnosticCode: string[];
  /** What email_recipients keeps: last_response and enhanced_code. */
  response: string;
  enhanced: string | null;
}

function reportedReply(status: string | null, diagnostic: string | null): Reply {
  const smtp = /^\s*smtp\s*;\s*(.*)$/is.exec(diagnostic ?? '');
  const reply = smtp ? parseReply(smtp[1].replace(/\s+/g, ' ')) : null;
  if (reply) {
    // A reply without an enhanced code takes the report's Status when their classes agree (RFC 3463 §2).
    return reply.enhanced || !status || status[0] !== String(reply.code)[0] ? reply : { ...reply, enhanced: status };
  }
  // No SMTP reply quoted (`X-Postfix; ...`, a qmail text, nothing): the status class gives the code.
  const code = status?.startsWith('4') ? 450 : status?.startsWith('2') ? 250 : 550;
  const text = (diagnostic ?? '')
    .replace(/^[\w-]+\s*;\s*/, '')
    .replace(/\s+/g, ' ')
    .trim();
  return { code, enhanced: status, text: [String(code), status, text].filter(Boolean).join(' ') };
}

/**
 * A recipient the report says failed. A reply the rules would retry (4xx, "try again later") is, in a report
 * of failure, a remote MTA that gave up after its own retries: Undetermined, like our own 72 hours.
 */
export function reportedBounce(status: string | null, diagnostic: string | null): ReportedBounce {
  const reply = reportedReply(status, diagnostic);
  const verdict = classify(reply);
  const { type, subType } =
    verdict.action === 'bounce' && verdict.bounce
      ? verdict.bounce
      : { type: 'Undetermined' as const, subType: 'Undetermined' as const };
  return {
    type,
    subType,
    message: bounceMessage(type, subType),
    diagnosticCode: [diagnostic?.replace(/\s+/g, ' ').trim() || `smtp; ${reply.text}`],
    response: reply.text.slice(0, 1000),
    enhanced: reply.enhanced,
  };
}
