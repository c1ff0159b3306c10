// The SMTP translator of ServiceError (STYLE 7): refusals keep their meaning as SMTP replies with enhanced
// status codes (RFC 3463); anything unexpected is 451 4.3.0, so our own bug never becomes a permanent bounce.
import type { SMTPServer } from 'smtp-server';
import { ServiceError } from '../../shared/errors.ts';
import { SmtpReply, temporaryFailure } from '../../shared/smtp/reply.ts';


const OWN_CODE = /^[245]\.\d{1,3}\.\d{1,3} /;

/**
 * Two corrections to every reply of `server`'s connections, made where smtp-server writes them (its connection's
 * send: one wrapper, so the dependency on the library's internals is in one place; a test fails if an upgrade
 * breaks it):
 * - With ENHANCEDSTATUSCODES announced (RFC 2034), smtp-server writes a code before the text of every reply, ours
 *   too, choosing it from the reply code alone (550 → 5.1.1, so `550 5.1.1 5.7.1 ...`); an error handed to its
 *   callbacks has no way to name its own. A reply whose text already starts with one gets none added: every reply
 *   carries exactly one code, ours where we chose it, the library's for its own (500 5.5.2, 530 5.7.0, ...).
 * - RFC 4954 §4 and RFC 8314: credentials travel only encrypted. smtp-server refuses AUTH before STARTTLS (538) but
 *   still announces it, so a client may send its key in the clear before learning it must not; like Postfix's
 *   smtpd_tls_auth_only, the EHLO reply leaves AUTH out until TLS is up.
 */
export function correctReplies(server: SMTPServer): void {
  const add = server.connections.add.bind(server.connections);
  server.connections.add = (connection) => {
    const send = connection.send.bind(connection);
    connection.send = (code, data, context) => {
      if (typeof data === 'string' && OWN_CODE.test(data)) return send(code, data, false);
      if (code === 250 && Array.isArray(data) && !connection.secure) return send(code, data.filter((line) => !/^AUTH /.test(line)), context);
      return send(code, data, context);
    };
    return add(connection);
  };
}

export function toSmtpReply(err: unknown): SmtpReply {
  if (err instanceof SmtpReply) return err;
  if (!(err instanceof ServiceError)) return temporaryFailure();
  const text = err.message.replace(/[\r\n]+/g, ' ').slice(0, 400);
  const details = err.options.details ?? {};
  if (err.options.smtp) return new SmtpReply(err.options.smtp.code, `${err.options.smtp.enhanced} ${text}`);
  switch (err.errorName) {
    case 'daily_quota_exceeded':
    case 'monthly_quota_exceeded':
    case 'rate_limit_exceeded':
      return new SmtpReply(451, `4.7.1 ${text}`);
    case 'concurrent_idempotent_requests':
      return new SmtpReply(451, `4.7.1 ${text}`);
    case 'invalid_idempotent_request':
    case 'invalid_idempotency_key':
      return new SmtpReply(550, `5.7.1 ${text}`);
    case 'invalid_attachment':
      return new SmtpReply(554, `5.6.0 ${text}`);
    case 'not_implemented':
      return new SmtpReply(554, `5.5.1 ${text}`);
    case 'validation_error':
    case 'missing_required_field':
      if (details.reason === 'invalid_recipient') return new SmtpReply(550, `5.1.1 ${text}`);
      if (err.status === 403) return new SmtpReply(550, `5.7.1 ${text}`);
      if (details.reason === 'bulk_requires_unsubscribe') return new SmtpReply(550, `5.7.1 ${text}`);
      return new SmtpReply(554, `5.6.0 ${text}`);
    default:
      return err.status >= 500 ? temporaryFailure() : new SmtpReply(550, `5.7.1 ${text}`);
  }
}
