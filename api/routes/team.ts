import { z } from 'zod';
import { getTeam, regions } from '../../shared/teams/teams.ts';
import { isoRequired } from '../../shared/time.ts';
import { defineOperation } from './operation.ts';
import { timestamp } from './schemas.ts';
import { teamMember } from './auth-schemas.ts';
import { listMembers, presentMember, riskState } from '../../shared/teams/members.ts';
import { identitiesOf } from '../../shared/teams/identities.ts';
import { findManagedDomain } from '../../shared/domains/managed.ts';

const PLAN_NAMES: Record<string, string> = { free: 'Free' };

const team = z
  .object({
    object: z.literal('team'),
    id: z.uuid(),
    name: z.string(),
    slug: z.string(),
    status: z.enum(['active', 'suspended']),
    created_at: timestamp,
    risk_state: z.string().describe('`normal`, `suspended` (by the operator) or `deletion_scheduled`'),
    plan: z
      .object({ code: z.string(), name: z.string() })
      .describe('A placeholder until billing is built: every team is on `free`'),
    sender_identity: z
      .object({
        managed_domain: z.string().nullable().describe("The team's managed domain, verified from the start"),
        verified_identities: z
          .array(z.string())
          .describe("Addresses the sandbox and the managed domain reach: the members' and the operator's"),
      })
      .describe('Where the team can send from and to right away'),
    ai_assist: z.object({ enabled: z.boolean() }).describe('AI assist (not built yet: always off)'),
    sso: z
      .object({ enabled: z.boolean(), provider: z.string().nullable(), enforced: z.boolean() })
      .describe('Single sign-on summary (not built yet: off)'),
    members: z.array(teamMember),
    sending: z.object({
      sandbox_regions: z.array(z.enum(regions)).describe('Regions still in the sending sandbox.'),
      rate_limit: z.object({ requests_per_second: z.number().int() }),
    }),
  })
  .meta({ id: 'Team' });

export const teamOperations = [
  defineOperation({
    operationId: 'getTeam',
    method: 'get',
    path: '/team',
    tag: 'team',
    summary: 'Retrieve the team',
    description:
      "The team the API key (or the session's current team) belongs to: its name, status, risk state, plan, sender identity, AI assist flag, single sign-on summary, members, the regions still in its sending sandbox and its rate limit.",
    permission: 'full_access',
    scope: 'team:read',
    response: team,
    handler: async ({ auth, deps }) => {
      const row = await getTeam(deps.db, auth.team.id);
      const [members, identities, managed] = await Promise.all([
        listMembers(deps.db, row.id),
        identitiesOf(deps.db, row.id),
        findManagedDomain(deps.db, row.id),
      ]);
      return {
        object: 'team' as const,
        id: row.id,
        name: row.name,
        slug: row.slug,
        status: row.status,
        created_at: isoRequired(row.created_at),
        risk_state: riskState(row),
        plan: { code: row.plan, name: PLAN_NAMES[row.plan] ?? row.plan },
        sender_identity: { managed_domain: managed?.name ?? null, verified_identities: identities.sort() },
        ai_assist: { enabled: row.ai_assist ?? false },
        sso: { enabled: false, provider: null, enforced: false },
        members: members.map(presentMember),
        sending: {
          sandbox_regions: row.sandbox_regions as (typeof regions)[number][],
          rate_limit: { requests_per_second: row.rate_limit_rps ?? deps.config.RATE_LIMIT_RPS },
        },
      };
    },
  }),
];
