// The human sentence of an email.bounced event (`bounce.message`), by bounce type and subType. One table for
// the MTA's synchronous bounces and the asynchronous ones the inbound MX reads from DSNs.
import type { BounceSubType, BounceType } from './rules.ts';

const messages: Record<string, string> = {
  'Permanent/NoEmail': "The recipient's mail server says the address does not exist.",
  'Permanent/General': "The recipient's mail server permanently rejected the email.",
  'Transient/MailboxFull': "The recipient's mailbox is full.",
  'Transient/MessageTooLarge': "The email is larger than the recipient's mail server accepts.",
  'Transient/ContentRejected': "The recipient's mail server rejected the content of the email.",
  'Transient/AttachmentRejected': "The recipient's mail server rejected an attachment of the email.",
  'Transient/General':
    "The recipient's mail server refused the email for a reason that is not the address (such as the sender's reputation).",
  'Undetermined/Undetermined': 'The email could not be delivered, and the reason could not be determined.',
};

export function bounceMessage(type: BounceType, subType: BounceSubType): string {
  return messages[`${type}/${subType}`] ?? messages['Undetermined/Undetermined'];
}
