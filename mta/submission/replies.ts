// The SMTP translator of ServiceError (STYLE 7): refusals keep their meaning as SMTP replies with enhanced
// status codes (RFC 3463); anything unexpected is 451 4.3.0, so our own bug never becomes a permanent bounce.
import { ServiceError } from '../../shared/errors.ts';
import { SmtpReply, temporaryFailure } from '../../shared/smtp/reply.ts';

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
