// Which RCPT TO addresses the MX serves (ARCHITECTURE, "The path of a received email", step 1): anything at a
// receiving-enabled domain's receiving address host (`@` is the domain itself, a label is `<label>.<domain>`),
// and our own return-path addresses `bounces+<token>@<custom_return_path>.<domain>`. Everything else is refused
// at RCPT, so we never accept a message we would then have to bounce (backscatter).
import type { Knex } from 'knex';
import { prepared } from '../../shared/db/prepared.ts';
import { readReturnPathAddress } from '../../shared/emails/mail-tokens.ts';
import type { RecipientCache, Served } from './recipient-cache.ts';

export type Recipient = Served | { kind: 'bounce'; teamId: string; domainId: null; emailId: string };

export function hostOf(address: string): string {
  return address
    .slice(address.lastIndexOf('@') + 1)
    .toLowerCase()
    .replace(/\.$/, '');
}

// Prepared statements (shared/db/prepared.ts): they run at every RCPT, and knex's building of them cost the MX more
// than running them.
const BOUNCE_SQL = `select e.team_id, d.name, d.custom_return_path
  from emails e join domains d on d.id = e.domain_id
  where e.id = $1 limit 1`;

// One indexed query (domains.name): the host as a domain at '@', or its first label at its parent domain. Should a
// name exist at several teams (a claim in progress), the verified one takes the mail.
const DOMAIN_SQL = `select id, team_id from domains
  where receiving = 'enabled' and ((name = $1 and receiving_host = '@') or (name = $2 and receiving_host = $3))
  order by (status = 'verified') desc, created_at limit 1`;

/** `cache`: the MX's memory of served hosts (recipient-cache.ts); the receive job looks without one. */
export async function findRecipient(
  db: Knex,
  secrets: Buffer,
  address: string,
  cache?: RecipientCache,
): Promise<Recipient | null> {
  if (address.lastIndexOf('@') < 1) return null;
  const host = hostOf(address);
  const emailId = readReturnPathAddress(secrets, address);
  if (emailId) {
    // A valid tag is only ours at the email's own return-path host.
    const [email] = await prepared<{ team_id: string; name: string; custom_return_path: string }>(
      db,
      'mx_bounce_recipient_v1',
      BOUNCE_SQL,
      [emailId],
    );
    if (email && `${email.custom_return_path}.${email.name}`.toLowerCase() === host)
      return { kind: 'bounce', teamId: email.team_id, domainId: null, emailId };
  }
  const remembered = cache?.get(host);
  if (remembered) return remembered;
  const dot = host.indexOf('.');
  const [label, parent] = dot > 0 ? [host.slice(0, dot), host.slice(dot + 1)] : ['', ''];
  const [domain] = await prepared<{ id: string; team_id: string }>(db, 'mx_domain_recipient_v1', DOMAIN_SQL, [
    host,
    parent,
    label,
  ]);
  if (!domain) return null;
  const recipient = { kind: 'mail' as const, teamId: domain.team_id, domainId: domain.id };
  cache?.set(host, recipient);
  return recipient;
}
