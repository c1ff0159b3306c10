// The world of the webhook tests: a platform that may send webhooks over http to loopback, a team, the delivery
// stages' dependencies, customer receivers on loopback (closed with the world), and a customer's verification of
// what arrived with the `standardwebhooks` and `svix` libraries and the official SDK.
import type { ExecutionContext } from 'ava';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { Resend } from 'resend';
import { startPlatform, type Platform, type TestTeam } from './platform.ts';
import { startReceiver, type Receiver } from './webhook-receiver.ts';
import { fanOutSettled } from '../../shared/webhooks/fanout.ts';
import { deliverDue, type DeliverDeps } from '../../shared/webhooks/deliver.ts';
import { secretsKey } from '../../shared/secrets.ts';

export interface WebhookWorld {
  p: Platform;
  team: TestTeam;
  deps: DeliverDeps;
  /** A receiver answering `script` (see startReceiver) on `port` (0: a free one), closed with the world. */
  receiver(script?: number[], port?: number): Promise<Receiver>;
  /** An endpoint of `key`'s team (the world's team by default) through the api. */
  createEndpoint(url: string, events: string[], key?: string): Promise<{ id: string; signing_secret: string }>;
  /** Fans out what has committed, then sends what is due at `now`. */
  run(now?: Date): ReturnType<typeof deliverDue>;
  close(): Promise<void>;
}

export async function startWebhookWorld(): Promise<WebhookWorld> {
  const p = await startPlatform({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  const team = await p.createTeam('Webhooks');
  const deps: DeliverDeps = { db: p.db, secrets: secretsKey(p.config), resolver: p.deps.dns, allowPrivate: true };
  const receivers: Receiver[] = [];
  return {
    p,
    team,
    deps,
    async receiver(script, port = 0) {
      const r = await startReceiver(script, '/hook', port);
      receivers.push(r);
      return r;
    },
    async createEndpoint(url, events, key = team.key) {
      const res = await p.request('POST', '/webhooks', { key, body: { endpoint: url, events } });
      if (res.status !== 201) throw new Error(`POST /webhooks: ${res.status} ${res.text}`);
      return res.body;
    },
    async run(now = new Date()) {
      await fanOutSettled(p.db, now);
      return deliverDue(deps, now);
    },
    async close() {
      await Promise.all(receivers.map((r) => r.close()));
      await p.close();
    },
  };
}

/**
 * The request verified as a customer would: with the `standardwebhooks` and `svix` libraries and with the official
 * SDK's `webhooks.verify`; each answers the body as sent.
 */
export function verifyAsCustomers(
  t: ExecutionContext,
  secret: string,
  r: { headers: Record<string, unknown>; body: string },
) {
  const h = r.headers as Record<string, string>;
  const sdk = new Resend('re_unused').webhooks.verify({
    payload: r.body,
    headers: { id: h['webhook-id'], timestamp: h['webhook-timestamp'], signature: h['webhook-signature'] },
    webhookSecret: secret,
  });
  t.deepEqual(sdk, JSON.parse(r.body));
  const standard = new StandardWebhook(secret).verify(r.body, {
    'webhook-id': h['webhook-id'],
    'webhook-timestamp': h['webhook-timestamp'],
    'webhook-signature': h['webhook-signature'],
  });
  const svix = new SvixWebhook(secret).verify(r.body, {
    'svix-id': h['svix-id'],
    'svix-timestamp': h['svix-timestamp'],
    'svix-signature': h['svix-signature'],
  });
  t.deepEqual(standard, JSON.parse(r.body));
  t.deepEqual(svix, JSON.parse(r.body));
  t.is(h['webhook-id'], h['svix-id']);
}
