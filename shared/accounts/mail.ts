// Account mails (verification, password reset, invitations, lock notices), sent from PLATFORM_FROM by the platform
// team through the one send path (prepare and persist of shared/emails/): committed, queued and delivered by the
// mta like any email. The email is written IN THE TRANSACTION of the account change it tells about (the sign-up's
// token, the reset token, the invitation): both commit or neither does, so a crash can leave no pending sign-up
// without its mail and no mail without its account change. Its delivery job is enqueued after the commit; a lost
// enqueue (a crash between commit and enqueue) is recovered by the mta's sweep like any accepted email's. A refusal
// (an unverified platform domain, no PLATFORM_FROM) is logged, never shown: no answer tells whether an address has
// an account.
import type { Knex } from 'knex';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { BlobStore } from '../blobs.ts';
import type { DnsResolver } from '../dns/resolver.ts';
import type { EnqueueDelivery } from '../emails/enqueue.ts';
import type { TemplateCache } from '../templates/send.ts';
import { prepareEmail, type Caller } from '../emails/prepare.ts';
import { persistEmails } from '../emails/persist.ts';
import { ServiceError } from '../errors.ts';
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
  templates?: TemplateCache;
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

/**
 * Writes account mails in the transaction of the account change: `write(trx, mail)` as many times as needed inside
 * it, then `enqueue()` once it committed. `rehearse` does a write's checks and writes nothing: a request that mails
 * nobody (a reset for an unknown address) costs what one that mails does.
 */
export interface Outbox {
  write(trx: Knex, mail: AccountMail): Promise<void>;
  rehearse(trx: Knex, mail: AccountMail): Promise<void>;
  /** After the commit: the delivery jobs of the emails written (a lost one is the sweep's). */
  enqueue(): Promise<void>;
}

/** Account mails: an Outbox per account change, or `send` for a mail that goes with no change of ours. */
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
  /** The prepared email of `mail` (read in `trx`), or null when it cannot go (logged). */
  const prepare = async (trx: Knex, from: PlatformSender | null, mail: AccountMail, now: Date) => {
    if (!from) return void deps.log.warn({ kind: mail.kind }, 'account_mail.no_platform_sender');
    const { text, html } = render(mail);
    const input = { from: formatMailbox(from.from), to: mail.to, subject: mail.subject, text, html };
    const caller: Caller = { team: from.team, key: null, source: 'api', requestId: null };
    try {
      return { caller, email: await prepareEmail(trx, deps, caller, input, now) };
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      deps.log.warn({ kind: mail.kind, err: err.message }, 'account_mail.refused');
      return undefined;
    }
  };
  const outbox = async (): Promise<Outbox> => {
    const from = await sender();
    const ids: string[] = [];
    return {
      async write(trx, mail) {
        const now = new Date();
        const ready = await prepare(trx, from, mail, now);
        if (!ready) return;
        const [row] = await persistEmails(trx, deps, ready.caller, [ready.email], now);
        if (row.status === 'queued') ids.push(row.id);
        deps.log.info({ kind: mail.kind, emailId: row.id }, 'account_mail.accepted');
      },
      async rehearse(trx, mail) {
        await prepare(trx, from, mail, new Date());
      },
      enqueue: () => deps.enqueueDelivery(ids.splice(0)),
    };
  };
  /** A mail on its own (a lock notice: the change is in Redis), in a transaction of its own. */
  const sendNow = async (mail: AccountMail) => {
    const box = await outbox();
    await deps.db.transaction((trx) => box.write(trx, mail));
    await box.enqueue();
  };
  return {
    /** An Outbox for one account change's transaction. */
    outbox,
    /** Starts a mail with no account change of ours, returns at once; a failure is logged (`account_mail.failed`). */
    send(mail: AccountMail): void {
      const running = sendNow(mail)
        .catch((err) => deps.log.warn({ kind: mail.kind, err: (err as Error).message }, 'account_mail.failed'))
        .finally(() => pending.delete(running));
      pending.add(running);
    },
    /** Waits for every `send` started so far. */
    async settled(): Promise<void> {
      while (pending.size) await Promise.allSettled([...pending]);
    },
  };
}

export type AccountMailer = ReturnType<typeof accountMailer>;
