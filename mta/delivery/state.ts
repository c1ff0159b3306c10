// Pure decisions of the record stage: a recipient's next row state after an outcome and the events it records.
import { decideDeferral } from './schedule.ts';
import type { BounceSubType, BounceType } from '../../shared/bounces/rules.ts';
import { bounceMessage } from '../../shared/bounces/messages.ts';
import type { LeasedRecipient, Outcome } from './types.ts';

export type RecipientEvent = 'delivered' | 'bounced' | 'delivery_delayed' | 'suppressed' | 'failed' | 'complained';

export interface NextState {
  columns: {
    status: 'delivered' | 'deferred' | 'bounced' | 'suppressed' | 'failed';
    last_response: string;
    enhanced_code: string | null;
    next_attempt_at: Date | null;
    first_deferred_at?: Date;
    delay_notified?: boolean;
    delivered_at?: Date;
    bounce_type?: BounceType;
    bounce_sub_type?: BounceSubType;
  };
  events: RecipientEvent[];
  bounce?: { type: BounceType; subType: BounceSubType; message: string; diagnosticCode: string[] };
  failed?: { reason: string };
  /** A hard bounce: the address joins the team's suppression list. */
  suppress: boolean;
  /** delivery_attempts.outcome of this recipient. */
  attempt: 'delivered' | 'deferred' | 'bounced' | null;
}

function bounced(o: Outcome, type: BounceType, subType: BounceSubType, message?: string): NextState {
  return {
    columns: {
      status: 'bounced',
      last_response: o.response,
      enhanced_code: o.enhanced,
      next_attempt_at: null,
      bounce_type: type,
      bounce_sub_type: subType,
    },
    events: ['bounced'],
    bounce: {
      type,
      subType,
      message: message ?? bounceMessage(type, subType),
      diagnosticCode: [`smtp; ${o.response}`],
    },
    suppress: type === 'Permanent' && !o.simulated,
    attempt: 'bounced',
  };
}

export function nextState(r: LeasedRecipient, o: Outcome, now: Date): NextState {
  const base = { last_response: o.response, enhanced_code: o.enhanced };
  switch (o.action) {
    case 'deliver':
      return {
        columns: { ...base, status: 'delivered', next_attempt_at: null, delivered_at: now },
        events: o.complaint ? ['delivered', 'complained'] : ['delivered'],
        suppress: false,
        attempt: 'delivered',
      };
    case 'bounce':
      return bounced(o, o.bounce?.type ?? 'Undetermined', o.bounce?.subType ?? 'Undetermined');
    case 'suppress':
      return {
        columns: { ...base, status: 'suppressed', next_attempt_at: null },
        events: ['suppressed'],
        suppress: false,
        attempt: null,
      };
    case 'fail':
      return {
        columns: { ...base, status: 'failed', next_attempt_at: null },
        events: ['failed'],
        failed: { reason: o.failReason ?? 'delivery_failed' },
        suppress: false,
        attempt: null,
      };
    case 'defer': {
      const d = decideDeferral(r, now);
      if (d.expired) {
        // Our own error for 72 h is no bounce of the recipient's: the email failed.
        if (o.rule === 'local-error') {
          return {
            columns: { ...base, status: 'failed', next_attempt_at: null },
            events: ['failed'],
            failed: { reason: 'delivery_failed' },
            suppress: false,
            attempt: 'deferred',
          };
        }
        return bounced(
          o,
          'Undetermined',
          'Undetermined',
          `Delivery was retried for 72 hours without success; the last answer was temporary.`,
        );
      }
      // The simulator's delayed@ shows its delay at once instead of after 15 minutes.
      const notify = d.notify || (!!o.simulated && !r.delay_notified);
      return {
        columns: {
          ...base,
          status: 'deferred',
          next_attempt_at: d.next_attempt_at,
          first_deferred_at: d.first_deferred_at,
          delay_notified: r.delay_notified || notify,
        },
        events: notify ? ['delivery_delayed'] : [],
        suppress: false,
        attempt: 'deferred',
      };
    }
  }
}
