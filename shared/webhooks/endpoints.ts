// Webhook endpoints: where a team's events go. The signing secret is stored sealed (shared/secrets.ts) and
// shown in full only by create and rotate; reads show its last four characters. Every function takes `db`
// first, so a caller composes one transaction.
import { isIP } from 'node:net';
import { isPublicAddress } from '../dns/server-address.ts';
import { PRIVATE_TARGETS_HINT } from './target.ts';
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { ServiceError } from '../errors.ts';
import { paginate, type ListQuery } from '../pagination.ts';
import { open, seal } from '../secrets.ts';
import type { EventType } from '../events.ts';

export const endpointStatuses = ['enabled', 'disabled'] as const;
export type EndpointStatus = (typeof endpointStatuses)[number];

export interface EndpointRow {
  id: string;
  team_id: string;
  endpoint: string;
  events: EventType[];
  status: EndpointStatus;
  secret_sealed: string;
  secret_last4: string;
  leased_until: Date | null;
  created_at: Date;
}

export const ENDPOINT_MAX_LENGTH = 2048;
const SECRET_BYTES = 24;
/** `whsec_` + base64 of 24 bytes: 38 characters, all masked but the last four. */
const SECRET_LENGTH = 'whsec_'.length + Math.ceil(SECRET_BYTES / 3) * 4;

/** Standard Webhooks: `whsec_` + base64 of the HMAC key (CONTRACT, Webhooks). */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}

export function maskSecret(last4: string): string {
  return '*'.repeat(SECRET_LENGTH - last4.length) + last4;
}

export function signingSecret(key: Buffer, row: Pick<EndpointRow, 'secret_sealed'>): string {
  return open(key, row.secret_sealed);
}

/** What the operator allows of webhook targets (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE_TARGETS). */
export interface EndpointRules {
  allowHttp: boolean;
  allowPrivate: boolean;
}

/**
 * Why `value` is not an endpoint URL we deliver to, or null. https only unless the operator allows http; no
 * credentials in the URL (they would travel to wherever it points, and show in lists); a host that is plainly
 * private (an IP literal, `localhost`) unless the operator allows it. A refusal the operator can lift names its
 * setting. Where a name resolves is checked at send time, on every attempt (target.ts).
 */
export function endpointProblem(value: string, allowHttp: boolean, allowPrivate = true): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:'))
    return allowHttp
      ? 'must be an http or https URL'
      : `must be an https URL${url.protocol === 'http:' ? ' (http:// is allowed only when the operator sets WEBHOOK_ALLOW_HTTP=true)' : ''}`;
  if (url.username || url.password) return 'must not contain credentials';
  if (!url.hostname) return 'must name a host';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const local = host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && !isPublicAddress(host));
  if (local && !allowPrivate) return `points at a private, loopback or link-local address (${PRIVATE_TARGETS_HINT})`;
  return null;
}

function checkEndpoint(value: string, rules: EndpointRules): string {
  const problem = endpointProblem(value, rules.allowHttp, rules.allowPrivate);
  if (problem)
    throw new ServiceError('validation_error', `\`endpoint\` ${problem}.`, {
      errors: [{ path: 'endpoint', message: problem }],
    });
  return value;
}

export interface CreateEndpointInput {
  endpoint: string;
  events: EventType[];
}

export async function createEndpoint(
  db: Knex,
  key: Buffer,
  teamId: string,
  input: CreateEndpointInput,
  rules: EndpointRules,
) {
  const secret = newSigningSecret();
  const [row] = await db('webhook_endpoints')
    .insert({
      id: newId(),
      team_id: teamId,
      endpoint: checkEndpoint(input.endpoint, rules),
      events: [...new Set(input.events)],
      status: 'enabled',
      secret_sealed: seal(key, secret),
      secret_last4: secret.slice(-4),
    })
    .returning('*');
  return { row: row as EndpointRow, secret };
}

export async function findEndpoint(db: Knex, teamId: string, id: string): Promise<EndpointRow | undefined> {
  return db('webhook_endpoints').where({ team_id: teamId, id }).first();
}

export async function listEndpoints(db: Knex, teamId: string, page: ListQuery) {
  return paginate<EndpointRow>(db('webhook_endpoints').where({ team_id: teamId }), page);
}

export interface UpdateEndpointInput {
  endpoint?: string;
  events?: EventType[];
  status?: EndpointStatus;
}

/** Disabling parks what is still waiting to go (CONTRACT: a disabled endpoint parks instead of dropping). */
export async function updateEndpoint(
  db: Knex,
  teamId: string,
  id: string,
  input: UpdateEndpointInput,
  rules: EndpointRules,
) {
  return db.transaction(async (trx) => {
    const patch: Record<string, unknown> = {};
    if (input.endpoint !== undefined) patch.endpoint = checkEndpoint(input.endpoint, rules);
    if (input.events !== undefined) patch.events = [...new Set(input.events)];
    if (input.status !== undefined) patch.status = input.status;
    const q = trx('webhook_endpoints').where({ team_id: teamId, id });
    const [row] = (
      Object.keys(patch).length ? await q.update(patch).returning('*') : await q.select('*')
    ) as EndpointRow[];
    if (row && input.status === 'disabled') {
      await trx('webhook_deliveries')
        .where({ endpoint_id: id, parked: false })
        .whereIn('status', ['pending', 'attempting'])
        .update({ parked: true });
    }
    return row;
  });
}

export async function deleteEndpoint(db: Knex, teamId: string, id: string): Promise<boolean> {
  return (await db('webhook_endpoints').where({ team_id: teamId, id }).delete()) > 0;
}

/** A new secret at once; the old one stops signing with the next attempt. */
export async function rotateSecret(db: Knex, key: Buffer, teamId: string, id: string) {
  const secret = newSigningSecret();
  const [row] = await db('webhook_endpoints')
    .where({ team_id: teamId, id })
    .update({ secret_sealed: seal(key, secret), secret_last4: secret.slice(-4) })
    .returning('*');
  return row ? { row: row as EndpointRow, secret } : undefined;
}
