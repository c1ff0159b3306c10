// The simulator (CONTRACT, "Sending"): recipients at SIMULATOR_DOMAIN never reach the network. The local part
// (before any `+label`, so `delivered+signup@` works too) says what happens:
//   delivered@   250, delivered
//   bounced@     550 5.1.1, bounced Permanent/General (no suppression: the address must keep bouncing on demand)
//   complained@  delivered, then email.complained
//   delayed@     first attempt deferred with email.delivery_delayed at once (no 15-minute wait), then delivered
//                at the next attempt (one retry step later, 1 minute)
//   suppressed@  suppressed with email.suppressed, as if on the team's suppression list
//   anything else  delivered
import { parseReply } from '../../shared/bounces/classify.ts';
import type { LeasedRecipient, Outcome } from './types.ts';

function reply(line: string) {
  const r = parseReply(line)!;
  return { code: r.code, enhanced: r.enhanced, response: r.text, simulated: true };
}

export function simulate(recipient: Pick<LeasedRecipient, 'address' | 'attempts'>): Outcome {
  const local = recipient.address.slice(0, recipient.address.lastIndexOf('@')).split('+')[0].toLowerCase();
  switch (local) {
    case 'bounced':
      return {
        ...reply('550 5.1.1 The simulated address does not exist'),
        action: 'bounce',
        rule: 'simulator',
        bounce: { type: 'Permanent', subType: 'General' },
      };
    case 'complained':
      return {
        ...reply('250 2.0.0 Delivered (simulated); a complaint follows'),
        action: 'deliver',
        rule: 'simulator',
        complaint: true,
      };
    case 'delayed':
      if (recipient.attempts === 0)
        return { ...reply('451 4.4.7 Delivery delayed (simulated)'), action: 'defer', rule: 'simulator' };
      return { ...reply('250 2.0.0 Delivered after a delay (simulated)'), action: 'deliver', rule: 'simulator' };
    case 'suppressed':
      return {
        ...reply('550 5.1.1 The simulated address is on the suppression list'),
        action: 'suppress',
        rule: 'simulator',
      };
    default:
      return { ...reply('250 2.0.0 Delivered (simulated)'), action: 'deliver', rule: 'simulator' };
  }
}
