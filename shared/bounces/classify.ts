// An SMTP reply (or a session that ended without one) → what it means for the recipient: deliver, defer or
// bounce, with the bounce type. The rules are data (rules.ts); this file parses and matches.
import { bounceRules, type Action, type BounceRule, type BounceSubType, type BounceType } from './rules.ts';

export interface Reply {
  code: number;
  /** RFC 3463 enhanced status code when the reply carries one (`5.1.1`). */
  enhanced: string | null;
  /** The whole reply, lines joined with a space, as kept in last_response. */
  text: string;
}

/** A session that produced no reply for this recipient: refused, timed out, dropped, or our own error. */
export interface Failure {
  /** ECONNREFUSED, ETIMEDOUT, ECONNECTION, ETLS, ... or ELOCAL for our own failure. */
  error: string;
  message: string;
  /** The enhanced status code it stands for, when 4.4.2 (a connection that broke) would misname it. */
  enhanced?: string;
}

export type Answer = Reply | Failure;

export interface Verdict {
  action: Action;
  rule: string;
  /** Reply code as kept: the server's, or 421/451 for a failure without one. */
  code: number;
  enhanced: string | null;
  /** What last_response keeps and bounce.diagnosticCode reports. */
  response: string;
  bounce?: { type: BounceType; subType: BounceSubType };
}

export const isReply = (a: Answer): a is Reply => 'code' in a;

/**
 * Parses a reply as nodemailer hands it (`550-5.1.1 first line\n550 5.1.1 second`, or one line). The enhanced
 * code is taken only when its class agrees with the reply code (RFC 3463 §2: the classes must match).
 */
export function parseReply(raw: string): Reply | null {
  const lines = raw
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  const first = /^(\d{3})(?:[ -](.*))?$/.exec(lines[0] ?? '');
  if (!first) return null;
  const code = Number(first[1]);
  const body = lines
    .map((l) => l.replace(/^\d{3}[ -]?/, ''))
    .join(' ')
    .trim();
  const ehc = /^([245])\.(\d{1,3})\.(\d{1,3})\b/.exec(body);
  const enhanced = ehc && ehc[1] === String(code)[0] ? `${ehc[1]}.${Number(ehc[2])}.${Number(ehc[3])}` : null;
  return { code, enhanced, text: `${code} ${body}`.trim() };
}

function matches(rule: BounceRule, answer: Answer): boolean {
  if (!isReply(answer)) return rule.error ? rule.error.test(answer.error) : !rule.code && !rule.enhanced && !rule.text;
  if (rule.error) return false;
  if (rule.code && !rule.code.test(String(answer.code))) return false;
  if (rule.enhanced && !(answer.enhanced && rule.enhanced.test(answer.enhanced))) return false;
  const body = answer.text.replace(/^\d{3}\s*/, '').replace(/^\d\.\d{1,3}\.\d{1,3}\s*/, '');
  if (rule.text && !rule.text.test(body)) return false;
  return true;
}

export function findRule(answer: Answer, rules: BounceRule[] = bounceRules): BounceRule {
  const rule = rules.find((r) => matches(r, answer));
  // The last rule matches everything; reaching here means the table was edited wrongly.
  if (!rule) throw new Error('bounce rules have no catch-all');
  return rule;
}

export function classify(answer: Answer, rules: BounceRule[] = bounceRules): Verdict {
  const rule = findRule(answer, rules);
  if (isReply(answer)) {
    return {
      action: rule.action,
      rule: rule.name,
      code: answer.code,
      enhanced: answer.enhanced,
      response: answer.text,
      ...(rule.bounce ? { bounce: rule.bounce } : {}),
    };
  }
  // A failure without a reply is kept as the reply a careful MTA would have given: 421 for a session that broke
  // (RFC 5321 §3.8), 451 4.3.0 for our own error.
  const local = answer.error === 'ELOCAL';
  const code = local ? 451 : 421;
  const enhanced = answer.enhanced ?? (local ? '4.3.0' : '4.4.2');
  return {
    action: rule.action,
    rule: rule.name,
    code,
    enhanced,
    response: `${code} ${enhanced} ${local ? 'local error' : answer.error}: ${answer.message}`.slice(0, 1000),
  };
}

/** Parses an example of rules.ts: a reply line, or `!CODE message` for a failure. */
export function parseExample(example: string): Answer {
  if (example.startsWith('!')) {
    const [error, ...rest] = example.slice(1).split(' ');
    return { error, message: rest.join(' ') };
  }
  const reply = parseReply(example);
  if (!reply) throw new Error(`not a reply: ${example}`);
  return reply;
}
