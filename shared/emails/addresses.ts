// Mailboxes as the API takes them: `addr@domain` or `Display Name <addr@domain>`. Strict on purpose: no CR/LF
// (header injection), no groups, no comments, no route addresses; the domain is stored in its ASCII form.
import { domainToASCII } from 'node:url';

export interface Mailbox {
  name: string | null;
  address: string;
  domain: string;
}

// RFC 5321 §4.1.2 dot-atom local part (quoted local parts are refused: nobody sends to them on purpose).
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export class AddressError extends Error {}

export function parseAddress(input: string): { address: string; domain: string } {
  const at = input.lastIndexOf('@');
  if (at <= 0 || at === input.length - 1) throw new AddressError('is not an email address');
  const local = input.slice(0, at);
  const domain = domainToASCII(input.slice(at + 1).toLowerCase());
  if (local.length > 64) throw new AddressError('has a local part longer than 64 characters');
  if (!LOCAL.test(local)) throw new AddressError('has characters not allowed in an address');
  if (!domain || domain.length > 253) throw new AddressError('has an invalid domain');
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) throw new AddressError('has an invalid domain');
  const address = `${local}@${domain}`;
  if (address.length > 320) throw new AddressError('is longer than 320 characters');
  return { address, domain };
}

export function parseMailbox(input: string): Mailbox {
  if (/[\r\n\0]/.test(input)) throw new AddressError('contains a line break');
  const text = input.trim();
  const angle = /^(.*?)\s*<([^<>]+)>$/.exec(text);
  if (!angle) return { name: null, ...parseAddress(text) };
  let name = angle[1].trim();
  if (name.startsWith('"') && name.endsWith('"') && name.length >= 2) name = name.slice(1, -1).replace(/\\(.)/g, '$1');
  if (name.length > 256) throw new AddressError('has a display name longer than 256 characters');
  return { name: name || null, ...parseAddress(angle[2].trim()) };
}

/** `"Name" <addr>` with the name quoted when it needs to be (RFC 5322 §3.2.4). */
export function formatMailbox(m: Pick<Mailbox, 'name' | 'address'>): string {
  if (!m.name) return m.address;
  const safe = /^[A-Za-z0-9 !#$%&'*+/=?^_`{|}~-]+$/.test(m.name);
  return `${safe ? m.name : `"${m.name.replace(/(["\\])/g, '\\$1')}"`} <${m.address}>`;
}
