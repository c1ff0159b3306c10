// Account mails (verification, password reset, invitations, lock notices), sent from PLATFORM_FROM by the platform
// team through the one send path (shared/emails/accept.ts): committed, queued and delivered by the mta like any
// email. A route never waits for one: the answer must take as long whether or not a mail went (no answer tells
// whether an address has an account), so sends run after it, and a refusal (an unverified platform domain) is
// logged, never shown.
import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { BlobStore } from '../blobs.ts';
import type { DnsResolver } from '../dns/resolver.ts';
import type { EnqueueDelivery } from '../emails/enqueue.ts';
import { acceptSends } from '../emails/accept.ts';
import { formatMailbox } from '../emails/addresses.ts';
import { secretsKey } from '../secrets.ts';
import { ensurePlatformSender, type PlatformSender } from './platform-sender.ts';

export interface MailDeps {
  db: Knex;
  config: Config;
  log: Logger;
  blobs: BlobStore;
  dns: DnsResolver;
  enqueueDelivery: EnqueueDelivery;
}

export interface AccountMail {
  /** What kind of mail (for the log line): `signup`, `signup_existing`, `password_reset`, `invitation`, `locked`. */
  kind: string;
  to: string;
  subject: string;
  /** Paragraphs of plain text; a link is a paragraph of its own and becomes a link in the HTML part. */
  paragraphs: string[];
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function render(mail: AccountMail): { text: string; html: string } {
  const text = mail.paragraphs.join('\n\n') + '\n';
  const html = mail.paragraphs
    .map((p) => (/^https?:\/\/\S+$/.test(p) ? `<p><a href="${escape(p)}">${escape(p)}</a></p>` : `<p>${escape(p)}</p>`))
    .join('\n');
  return { text, html: `<!doctype html><html><body>${html}</body></html>` };
}

const SENDER_CACHE_MS = 10_000;

/** Sends account mails; `pending` lets a test (or a shutdown) wait for the sends still running. */
export function accountMailer(deps: MailDeps) {
  let cached: { at: number; sender: PlatformSender | null } | undefined;
  const pending = new Set<Promise<void>>();
  const sender = async () => {
    if (cached && Date.now() - cached.at < SENDER_CACHE_MS) return cached.sender;
    const found = await ensurePlatformSender(deps.db, deps.config, {
      hosts: deps.config,
      secrets: secretsKey(deps.config),
      resolver: deps.dns,
      reservedAllowed: deps.config.RESERVED_TLDS_ALLOWED,
    });
    cached = { at: Date.now(), sender: found };
    return found;
  };
  const send = async (mail: AccountMail) => {
    const from = await sender();
    if (!from) return void deps.log.warn({ kind: mail.kind }, 'account_mail.no_platform_sender');
    const { text, html } = render(mail);
    const input = { from: formatMailbox(from.from), to: mail.to, subject: mail.subject, text, html };
    const caller = { team: from.team, key: null, source: 'api' as const, requestId: null };
    const accepted = await acceptSends(deps, caller, [input], {
      now: new Date(),
      read: (i) => ({ input: i }),
      batch: null,
      reservation: null,
    });
    deps.log.info({ kind: mail.kind, emailId: 'id' in accepted ? accepted.id : null }, 'account_mail.accepted');
  };
  return {
    /** Starts the send and returns at once; a failure is logged (`account_mail.failed`). */
    send(mail: AccountMail): void {
      const running = send(mail)
        .catch((err) => deps.log.warn({ kind: mail.kind, err: (err as Error).message }, 'account_mail.failed'))
        .finally(() => pending.delete(running));
      pending.add(running);
    },
    /** Waits for every send started so far. */
    async settled(): Promise<void> {
      while (pending.size) await Promise.allSettled([...pending]);
    },
  };
}

export type AccountMailer = ReturnType<typeof accountMailer>;
