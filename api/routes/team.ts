import { z } from 'zod';
import { getTeam, regions } from '../../shared/teams/teams.ts';
import { isoRequired } from '../../shared/time.ts';
import { defineOperation } from './operation.ts';
import { timestamp } from './schemas.ts';

const team = z
  .object({
    object: z.literal('team'),
    id: z.uuid(),
    name: z.string(),
    slug: z.string(),
    status: z.enum(['active', 'suspended']),
    created_at: timestamp,
    plan: z.object({ code: z.string() }),
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
      'The team the API key belongs to: its name, status, plan, the regions still in its sending sandbox and its rate limit.',
    permission: 'full_access',
    scope: 'team:read',
    response: team,
    handler: async ({ auth, deps }) => {
      const row = await getTeam(deps.db, auth.team.id);
      return {
        object: 'team' as const,
        id: row.id,
        name: row.name,
        slug: row.slug,
        status: row.status,
        created_at: isoRequired(row.created_at),
        plan: { code: row.plan },
        sending: {
          sandbox_regions: row.sandbox_regions as (typeof regions)[number][],
          rate_limit: { requests_per_second: row.rate_limit_rps ?? deps.config.RATE_LIMIT_RPS },
        },
      };
    },
  }),
];
