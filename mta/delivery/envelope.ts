// The envelope sender (RFC 5321 MAIL FROM, the future Return-Path): `bounces+<token>@<custom_return_path>.
// <domain>`. The return-path label's MX points at our inbound host, so bounces come back to us, and the token
// (shared/emails/mail-tokens.ts) names the email with an HMAC tag, so a bounce finds its email and a forged one
// is ignored. One envelope per email: DSNs (RFC 3464) name the failed recipient themselves.
import { returnPathAddress } from '../../shared/emails/mail-tokens.ts';

export interface SendingDomain {
  id: string;
  name: string;
  custom_return_path: string;
}

export function envelopeSender(secrets: Buffer, emailId: string, domain: SendingDomain): string {
  return returnPathAddress(secrets, emailId, domain.custom_return_path, domain.name);
}
