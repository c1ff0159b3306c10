import { z } from 'zod';
import { getTeam, regions } from '../../shared/teams/teams.ts';
import { contactUsage } from '../../shared/contacts/billable.ts';
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
    contacts: z
      .object({
        contacts_included: z
          .number()
          .int()
          .describe(
            'The contact allowance: billable contacts the team may have, 0 meaning unlimited. Past it new contacts are refused (403 `validation_error` naming `contacts_included`; an import row fails). Set by the operator (`team set-contacts-included`) until plans exist.',
          ),
        billable_contacts: z
          .number()
          .int()
          .describe(
            'Contacts now billable: not `unsubscribed`, not suppressed, and subscribed to at least one topic (an `opt_in` choice, or no choice for a topic whose default is `opt_in`). Counted when asked.',
          ),
        peak_billable_contacts: z
          .number()
          .int()
          .describe(
            "The period's highest count of billable contacts seen: taken at each new contact of a limited team, each import, within 10 s after contacts change through the API, hourly, and at this request.",
          ),
        period_start: z.iso
          .date()
          .describe('The first day (UTC) of the period the peak is for: periods are calendar months.'),
      })
      .describe(
        'The contact allowance and its use (until `/billing` is built, where `usage` will carry the same figures).',
      ),
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
      "The team the API key (or the session's current team) belongs to: its name, status, risk state, plan, sender identity, AI assist flag, single sign-on summary, members, the regions still in its sending sandbox, its rate limit, and its contact allowance with the billable contacts and the period's peak (counted in PostgreSQL at each request: about a second for a million contacts).",
    permission: 'full_access',
    // It lists the members: no OAuth scope reaches team member listing (spec, Authentication 5).
    scope: null,
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
        contacts: await contactUsage(deps.db, row.id),
      };
    },
  }),
];
