// Which RCPT TO addresses the MX serves (ARCHITECTURE, "The path of a received email", step 1): anything at a
// receiving-enabled domain's receiving address host (`@` is the domain itself, a label is `<label>.<domain>`),
// and our own return-path addresses `bounces+<token>@<custom_return_path>.<domain>`. Everything else is refused
// at RCPT, so we never accept a message we would then have to bounce (backscatter).
import type { Knex } from 'knex';
import { readReturnPathAddress } from '../../shared/emails/mail-tokens.ts';

export type Recipient =
  | { kind: 'mail'; teamId: string; domainId: string }
  | { kind: 'bounce'; teamId: string; domainId: null; emailId: string };

export function hostOf(address: string): string {
  return address
    .slice(address.lastIndexOf('@') + 1)
    .toLowerCase()
    .replace(/\.$/, '');
}

export async function findRecipient(db: Knex, secrets: Buffer, address: string): Promise<Recipient | null> {
  if (address.lastIndexOf('@') < 1) return null;
  const host = hostOf(address);
  const emailId = readReturnPathAddress(secrets, address);
  if (emailId) {
    // A valid tag is only ours at the email's own return-path host.
    const email = await db('emails')
      .join('domains', 'domains.id', 'emails.domain_id')
      .where('emails.id', emailId)
      .first('emails.team_id', 'domains.name', 'domains.custom_return_path');
    if (email && `${email.custom_return_path}.${email.name}`.toLowerCase() === host)
      return { kind: 'bounce', teamId: email.team_id, domainId: null, emailId };
  }
  const dot = host.indexOf('.');
  const [label, parent] = dot > 0 ? [host.slice(0, dot), host.slice(dot + 1)] : ['', ''];
  // One indexed query (domains.name): the host as a domain at '@', or its first label at its parent domain.
  // Should a name exist at several teams (a claim in progress), the verified one takes the mail.
  const domain = await db('domains')
    .where('receiving', 'enabled')
    .andWhere((q) => q.where({ name: host, receiving_host: '@' }).orWhere({ name: parent, receiving_host: label }))
    .orderByRaw(`(status = 'verified') desc, created_at`)
    .first('id', 'team_id');
  return domain ? { kind: 'mail', teamId: domain.team_id, domainId: domain.id } : null;
}
