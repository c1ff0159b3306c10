// Standard Webhooks signing (CONTRACT, Webhooks; reference/resend-api.md §4): HMAC-SHA256 under the base64 key
// after `whsec_`, over `${id}.${timestamp}.${body}` with the body exactly as sent. The same three headers go out
// again as svix-*, so receivers on either library (standardwebhooks, svix) verify them unchanged.
import { createHmac } from 'node:crypto';

export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export function signedHeaders(secret: string, id: string, now: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const sig = signature(secret, id, timestamp, body);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': sig,
    'svix-id': id,
    'svix-timestamp': String(timestamp),
    'svix-signature': sig,
  };
}
