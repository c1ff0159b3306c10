import { Counter, type Registry } from 'prom-client';

/**
 * Emails committed by the accept path (shared/emails/accept.ts), by the surface that took them; the series of this
 * process's surface starts at 0, so a rate over it is defined before the first send.
 */
export function emailsAcceptedCounter(registry: Registry, surface: 'api' | 'smtp') {
  const counter = new Counter({
    name: 'postwerk_emails_accepted_total',
    help: 'Emails accepted (committed and answered with an id), by surface: api (POST /emails, /emails/batch) or smtp (submission)',
    labelNames: ['surface'] as const,
    registers: [registry],
  });
  counter.inc({ surface }, 0);
  return counter;
}

/** What the accept path needs of the counter: a thread relaying to its process's counter is one too. */
export type EmailsAccepted = Pick<Counter<'surface'>, 'inc'>;
