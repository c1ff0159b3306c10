import { z } from 'zod';
import { autoconfigure } from '../../shared/domains/autoconfigure.ts';
import { forgetCredential } from '../../shared/domains/dns-credentials.ts';
import { assertWritable, findDomain } from '../../shared/domains/store.ts';
import { secretsKey } from '../../shared/secrets.ts';
import { defineOperation } from './operation.ts';
import { pathId } from './schemas.ts';
import type { ApiDeps } from '../deps.ts';

const domainParams = z.object({ domain_id: pathId('domain') });
const base = { tag: 'domains', permission: 'full_access', scope: 'domains:write' } as const;

const body = z
  .object({
    server: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe(
        'The DNS server that takes the updates: a host name or an IP address (public unless the operator allows private ones)',
      ),
    port: z.number().int().min(1).max(65535).optional().describe('Default 53'),
    zone: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('The zone to update: the domain itself (default) or a parent of it'),
    key_name: z.string().min(1).max(255).optional().describe('The TSIG key name as the server knows it'),
    algorithm: z.enum(['hmac-sha256', 'hmac-sha512']).optional().describe('Default hmac-sha256'),
    secret: z.string().min(1).max(1024).optional().describe('The TSIG secret, base64'),
    keep_credential: z
      .boolean()
      .optional()
      .describe(
        'Keep this credential (secret encrypted at rest) so later calls may omit server, key and secret; an earlier kept credential stays until deleted',
      ),
  })
  .describe('Give server, key_name and secret, or none of the credential fields to use the kept credential');

const response = z
  .object({
    object: z.literal('domain'),
    id: z.uuid(),
    created: z
      .array(z.string())
      .describe('Records added, one line each: `send.example.com MX 10 feedback.example.net`'),
    updated: z.array(z.string()).describe('Values the platform added earlier that were wrong and were replaced'),
    conflicts: z.array(z.string()).describe('Records someone else published where ours must stand; left untouched'),
    credential_kept: z.boolean(),
  })
  .meta({ id: 'AutoconfigureResponse' });

export const domainAutoconfigureOperations = [
  defineOperation({
    ...base,
    operationId: 'autoconfigureDomain',
    method: 'post',
    path: '/domains/{domain_id}/auto-configure',
    summary: "Publish a domain's records by DNS update",
    description:
      "Publish the domain's records in your DNS server through RFC 2136 updates signed with your TSIG key; never deletes a record the platform did not create.",
    params: domainParams,
    body,
    response,
    handler: async ({ auth, params, body, deps }) => {
      const result = await autoconfigure(deps.db, auth.team.id, params.domain_id, body, context(deps));
      deps.log.info(
        {
          domainId: params.domain_id,
          created: result.created.length,
          updated: result.updated.length,
          conflicts: result.conflicts.length,
        },
        'domain.autoconfigured',
      );
      return { object: 'domain' as const, id: params.domain_id, ...result };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'deleteDomainDnsCredential',
    method: 'delete',
    path: '/domains/{domain_id}/auto-configure/credential',
    summary: 'Forget the DNS update credential',
    description: 'Forget the kept TSIG credential of the domain.',
    params: domainParams,
    response: z
      .object({ object: z.literal('domain_dns_credential'), id: z.uuid(), deleted: z.literal(true) })
      .meta({ id: 'DeleteCredentialResponse' }),
    handler: async ({ auth, params, deps }) => {
      assertWritable(await findDomain(deps.db, auth.team.id, params.domain_id));
      await forgetCredential(deps.db, params.domain_id);
      return { object: 'domain_dns_credential' as const, id: params.domain_id, deleted: true as const };
    },
  }),
];

function context(deps: ApiDeps) {
  return {
    hosts: deps.config,
    secrets: secretsKey(deps.config),
    resolver: deps.dns,
    allowPrivate: deps.config.DNS_UPDATE_ALLOW_PRIVATE,
    reservedAllowed: deps.config.RESERVED_TLDS_ALLOWED,
  };
}
