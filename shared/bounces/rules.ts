// What an SMTP answer means for a recipient, as data. The first rule whose every given field matches wins.
// Shared by the MTA (a reply during delivery) and the inbound bounce reader (the reply a remote MTA quotes in
// a DSN or a non-standard bounce), so one table decides both.
// Each rule carries the replies it was written for (`examples`): test/mta-classify.test.ts checks that every
// example lands on its own rule, so a rule added above another cannot silently take its cases.
//
// Bounce types follow resend-api.md §4 (email.bounced): Permanent bounces are the address's fault and add a
// suppression; Transient ones (a full mailbox, our content, our reputation) end the delivery but leave the
// address usable; Undetermined is what we cannot attribute (72 h of deferrals, protocol trouble).

export type BounceType = 'Permanent' | 'Transient' | 'Undetermined';
export type BounceSubType =
  'Undetermined' | 'General' | 'NoEmail' | 'MailboxFull' | 'MessageTooLarge' | 'ContentRejected' | 'AttachmentRejected';
export type Action = 'deliver' | 'defer' | 'bounce';

export interface BounceRule {
  name: string;
  /** Matched against the three-digit reply code. */
  code?: RegExp;
  /** Matched against the RFC 3463 enhanced status code (`5.1.1`). */
  enhanced?: RegExp;
  /** Matched against the reply text (after the codes). */
  text?: RegExp;
  /** Matched against the error code of a session that produced no reply (ECONNREFUSED, ETIMEDOUT, ...). */
  error?: RegExp;
  action: Action;
  bounce?: { type: BounceType; subType: BounceSubType };
  /** Reply lines (or `!ERRORCODE message` for a failure without a reply) this rule exists for. */
  examples: string[];
}

const FIVE = /^5/;

export const bounceRules: BounceRule[] = [
  {
    name: 'accepted',
    code: /^2/,
    action: 'deliver',
    examples: ['250 2.0.0 Ok: queued as 4Bc1', '251 User not local; will forward'],
  },
  // STYLE 7: our own failure (a bug, an unreadable blob, a signing error) is a 421, never a permanent bounce.
  { name: 'local-error', error: /^ELOCAL$/, action: 'defer', examples: ['!ELOCAL blob emails/x missing'] },
  // A domain with `tls: enforced` and a host that offers no encrypted session (mta/delivery/transmit.ts): the host
  // may offer one later, so the recipient waits; 72 hours without one bounce it as any deferral does.
  {
    name: 'tls-required',
    error: /^ENOTLS$/,
    action: 'defer',
    examples: ['!ENOTLS the sending domain requires TLS (tls: enforced) and mx.example did not offer STARTTLS'],
  },
  {
    name: 'network',
    error: /./,
    action: 'defer',
    examples: [
      '!ECONNREFUSED connect ECONNREFUSED 127.0.0.1:25',
      '!ETIMEDOUT Timeout',
      '!ECONNECTION Connection closed unexpectedly',
    ],
  },
  // Receivers that answer 5xx while saying the problem is passing (a misconfigured greylist, an overloaded queue).
  {
    name: 'temporary-despite-5xx',
    code: FIVE,
    text: /try (again )?later|temporar(il)?y|greylist/i,
    action: 'defer',
    examples: ['550 Greylisted, please try again later', '554 5.7.1 Service temporarily unavailable'],
  },
  // RFC 7505 §4.2: a domain that publishes a null MX accepts no mail.
  {
    name: 'null-mx',
    code: FIVE,
    enhanced: /^5\.1\.10$/,
    action: 'bounce',
    bounce: { type: 'Permanent', subType: 'General' },
    examples: ['550 5.1.10 Recipient address has null MX'],
  },
  {
    name: 'mailbox-full',
    code: FIVE,
    enhanced: /^5\.2\.2$/,
    action: 'bounce',
    bounce: { type: 'Transient', subType: 'MailboxFull' },
    examples: ['552 5.2.2 Mailbox full', '550 5.2.2 The email account that you tried to reach is over quota'],
  },
  {
    name: 'mailbox-full-text',
    code: FIVE,
    text: /mailbox (is )?full|over ?quota|quota exceeded|insufficient (storage|space)/i,
    action: 'bounce',
    bounce: { type: 'Transient', subType: 'MailboxFull' },
    examples: ['552 Requested mail action aborted: mailbox full', '554 quota exceeded'],
  },
  {
    name: 'no-such-user',
    code: FIVE,
    enhanced: /^5\.1\.[01]$/,
    action: 'bounce',
    bounce: { type: 'Permanent', subType: 'NoEmail' },
    examples: ['550 5.1.1 <x@example.com>: Recipient address rejected: User unknown', '550 5.1.0 Address rejected'],
  },
  {
    name: 'no-such-user-text',
    code: FIVE,
    text: /user unknown|unknown (user|recipient)|no such (user|mailbox|recipient)|does not exist|recipient not found|invalid (recipient|mailbox)/i,
    action: 'bounce',
    bounce: { type: 'Permanent', subType: 'NoEmail' },
    examples: ['550 No such user here', "554 delivery error: dd This user doesn't have an account (dd does not exist)"],
  },
  {
    name: 'bad-destination',
    code: FIVE,
    enhanced: /^5\.1\.[2-9]$|^5\.4\.\d+$/,
    action: 'bounce',
    bounce: { type: 'Permanent', subType: 'General' },
    examples: ['550 5.1.2 Domain example.invalid does not accept mail', '554 5.4.4 Unable to route'],
  },
  {
    name: 'mailbox-disabled',
    code: FIVE,
    enhanced: /^5\.2\.1$/,
    action: 'bounce',
    bounce: { type: 'Permanent', subType: 'General' },
    examples: ['550 5.2.1 The email account that you tried to reach is disabled'],
  },
  {
    name: 'message-too-large',
    code: FIVE,
    enhanced: /^5\.(2\.3|3\.4)$/,
    action: 'bounce',
    bounce: { type: 'Transient', subType: 'MessageTooLarge' },
    examples: ['552 5.3.4 Message size exceeds fixed limit', '552 5.2.3 Message length exceeds administrative limit'],
  },
  {
    name: 'message-too-large-text',
    code: FIVE,
    text: /too (large|big)|size exceeds|exceeds .*size/i,
    action: 'bounce',
    bounce: { type: 'Transient', subType: 'MessageTooLarge' },
    examples: ['552 Message too large'],
  },
  {
    name: 'attachment-rejected',
    code: FIVE,
    text: /attachment|virus|malware|infected/i,
    action: 'bounce',
    bounce: { type: 'Transient', subType: 'AttachmentRejected' },
    examples: ['554 5.7.1 Message rejected: attachment type not allowed', '550 5.7.0 Virus found'],
  },
  // Our sending address or IP is the problem, not the recipient's address: no suppression.
  {
    name: 'blocklisted',
    code: FIVE,
    text: /spamhaus|block ?list|black ?list|listed (at|on|in)|\brbl\b|reputation|\bblocked\b|banned/i,
    action: 'bounce',
    bounce: { type: 'Transient', subType: 'General' },
    examples: [
      '554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org',
      '550 5.7.606 Access denied, banned sending IP',
    ],
  },
  {
    name: 'authentication',
    code: FIVE,
    enhanced: /^5\.7\.(2[5-9]|30)$/,
    action: 'bounce',
    bounce: { type: 'Transient', subType: 'ContentRejected' },
    examples: ["550 5.7.26 Unauthenticated email from example.com is not accepted due to domain's DMARC policy"],
  },
  {
    name: 'content-rejected',
    code: FIVE,
    enhanced: /^5\.[67]\.\d+$/,
    action: 'bounce',
    bounce: { type: 'Transient', subType: 'ContentRejected' },
    examples: ['550 5.7.1 Message rejected as spam', '554 5.6.0 Message content rejected'],
  },
  {
    name: 'content-rejected-text',
    code: FIVE,
    text: /spam|content|policy/i,
    action: 'bounce',
    bounce: { type: 'Transient', subType: 'ContentRejected' },
    examples: ['554 Message refused by policy', '550 High probability of spam'],
  },
  // 500-504 and X.5.X answer our protocol, not the address: a final answer, but nothing to suppress.
  {
    name: 'protocol',
    code: /^50[0-4]$/,
    action: 'bounce',
    bounce: { type: 'Undetermined', subType: 'Undetermined' },
    examples: ['501 5.5.4 Syntax error in parameters', '502 Command not implemented'],
  },
  {
    name: 'protocol-enhanced',
    code: FIVE,
    enhanced: /^5\.5\.\d+$/,
    action: 'bounce',
    bounce: { type: 'Undetermined', subType: 'Undetermined' },
    examples: ['554 5.5.1 Error: no valid recipients'],
  },
  {
    name: 'permanent',
    code: FIVE,
    action: 'bounce',
    bounce: { type: 'Permanent', subType: 'General' },
    examples: [
      '550 Requested action not taken: mailbox unavailable',
      "553 sorry, that domain isn't in my list of allowed rcpthosts",
    ],
  },
  {
    name: 'temporary',
    code: /^4/,
    action: 'defer',
    examples: ['450 4.2.1 Try again later', '421 4.7.0 Too many connections', '452 4.2.2 Mailbox full'],
  },
  // 1xx/3xx where a final reply belongs: the peer is confused; try again rather than guess.
  { name: 'unexpected', action: 'defer', examples: ['354 End data with <CR><LF>.<CR><LF>'] },
];
