// Bounces that are not RFC 3464 DSNs but prose a person is meant to read: qmail's "Hi. This is the qmail-send
// program" (addresses in `<...>:` blocks, each with what the remote host said) and the plain-text kind Exchange,
// Gmail and many appliances send (the failed address and the remote reply somewhere in the text). Heuristics,
// deliberately narrow: a text that reads like neither gives null, and the caller logs it as unparseable. Pure.
import { addressesIn, originalRecipients } from './report-fields.ts';
import type { Finding } from './finding.ts';
import { statusCode } from './dsn.ts';

export interface PlainBounce {
  format: 'qmail' | 'plain';
  findings: Finding[];
  /** To and Cc of the copy of the original message the text carries, if any. */
  originalRecipients: string[];
}

/**
 * Where the copy of the original message starts (a line that opens it): everything after it is the sender's
 * text, not the report. Anchored at line starts and bounded, so a hostile line costs linear time.
 */
const COPY =
  /^(?:-{2,}[^\r\n]{0,100}?(?:below this line|copy of the message|original message|forwarded message|returned message|headers of the message)|original message headers:|(?:received|return-path|dkim-signature|message-id|mime-version): )/im;

/** Bounce prose is short: what lies beyond this is not read, and at most this many addresses are considered. */
const MAX_TEXT = 100_000;
const MAX_ADDRESSES = 50;

/** A remote reply quoted in prose: `550 5.1.1 text` (code and enhanced code), or a bare `550 text` after "said:". */
const REPLY =
  /\b([45]\d\d)[ -]([45]\.\d{1,3}\.\d{1,3})\b([^\r\n]*)|(?:said|returned|was):?\s*['"]?([45]\d\d)[ -]([^\r\n]*)/i;

const FAILED =
  /could ?n[o']t be delivered|was ?n[o']t delivered|not be delivered|delivery (?:has |to the following recipients? )?failed|failed permanently|permanent (?:error|failure)|undeliverable|delivery failure|failure notice|returned mail|unable to deliver|address not found/i;
const DELAYED =
  /delayed|not (?:yet )?been delivered yet|will (?:retry|keep trying|continue (?:trying|to try))|still trying|delivery delay/i;
const GAVE_UP = /permanent|given up|gave up|giving up/i;

/** The first remote reply in `text` at or after `from`, as a typed diagnostic (`smtp; 550 5.1.1 ...`). */
function replyIn(text: string, from = 0): { status: string | null; diagnostic: string } | null {
  const m = REPLY.exec(text.slice(from));
  if (!m) return null;
  const [code, enhanced, rest] = m[1] ? [m[1], m[2], m[3]] : [m[4], null, m[5]];
  // Prose quotes the reply ('550 5.1.1 ...'): the closing quote is not the server's.
  const reply = [code, enhanced, rest.trim().replace(/['"]+$/, '')].filter(Boolean).join(' ');
  return { status: statusCode(enhanced), diagnostic: `smtp; ${reply}` };
}

function split(text: string): { report: string; copy: string } {
  const m = COPY.exec(text);
  if (!m) return { report: text, copy: '' };
  // The copy starts on the line after a separator, or at the header line itself.
  const copy = m[0].endsWith(' ') ? text.slice(m.index) : text.slice(m.index).replace(/^[^\n]*\n?/, '');
  return { report: text.slice(0, m.index), copy };
}

/** qmail-send's bounce (qmail's qsutil/qmail-send.c wording, unchanged since 1998): `<address>:` blocks. */
function qmail(report: string): Finding[] {
  const temporary = !GAVE_UP.test(report) && /temporary|still trying/i.test(report);
  const findings: Finding[] = [];
  const blocks = [...report.matchAll(/^<([^<>\s@]+@[^<>\s]+)>:[ \t]*$/gm)].slice(0, MAX_ADDRESSES);
  blocks.forEach((b, i) => {
    const body = report.slice(b.index! + b[0].length, blocks[i + 1]?.index ?? report.length);
    const reply = replyIn(body);
    findings.push({
      kind: temporary ? 'delayed' : 'failed',
      addresses: [b[1]],
      status: reply?.status ?? null,
      diagnostic: reply?.diagnostic ?? `qmail; ${body.trim().replace(/\s+/g, ' ')}`,
      detail: 'qmail',
    });
  });
  return findings;
}

/** The prose kind: failed or delayed by its wording, one finding per address it names. */
function prose(report: string): Finding[] | null {
  const delayed = DELAYED.test(report) && !GAVE_UP.test(report);
  const failed = !delayed && (FAILED.test(report) || /\b5\d\d[ -]5\.\d{1,3}\.\d{1,3}\b/.test(report));
  if (!delayed && !failed) return null;
  const kind = delayed ? 'delayed' : 'failed';
  const addresses = addressesIn(report).slice(0, MAX_ADDRESSES);
  // No address in the text (some name the recipient by display name only): the caller may still match the
  // returned message's headers.
  if (addresses.length === 0) {
    const reply = replyIn(report);
    return [
      { kind, addresses: [], status: reply?.status ?? null, diagnostic: reply?.diagnostic ?? null, detail: 'plain' },
    ];
  }
  return addresses.map((address) => {
    const reply = replyIn(report, report.indexOf(address)) ?? replyIn(report);
    return {
      kind,
      addresses: [address],
      status: reply?.status ?? null,
      diagnostic: reply?.diagnostic ?? null,
      detail: 'plain',
    };
  });
}

export function readPlainBounce(text: string): PlainBounce | null {
  const { report, copy } = split(text.slice(0, MAX_TEXT));
  const original = copy ? originalRecipients(copy.replace(/^\s+/, '')) : [];
  if (/this is the qmail-send program/i.test(report)) {
    const findings = qmail(report);
    return findings.length ? { format: 'qmail', findings, originalRecipients: original } : null;
  }
  const findings = prose(report);
  return findings ? { format: 'plain', findings, originalRecipients: original } : null;
}
