// GET /emails/metrics (reference/resend-api.md §1.1): the team's sending metrics over a range, grouped by period,
// domain, email or broadcast, from the counters the worker and the api keep as events happen (docs/metrics.md).
import { z } from 'zod';
import { COUNTERS } from '../../shared/email-metrics/counters.ts';
import {
  DIMENSIONS,
  GRANULARITIES,
  MAX_IDS,
  MAX_PERIODS,
  METRICS,
  readMetricsQuery,
} from '../../shared/email-metrics/params.ts';
import { checkOwned, queryMetrics, resolveRange } from '../../shared/email-metrics/query.ts';
import { defineOperation } from './operation.ts';
import { timestamp } from './schemas.ts';

const listParam = (what: string) =>
  z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe(`${what}; a comma-separated list, or the parameter repeated`);
const oneParam = (what: string) => z.string().optional().describe(what);

const metricValues = Object.fromEntries(METRICS.map((m) => [m, z.number().optional()]));
const metricsRow = z
  .object({
    period: timestamp.optional().describe("The period's start, as an instant (its local start in `timezone`)"),
    domain_id: z.uuid().nullable().optional(),
    domain_name: z.string().nullable().optional().describe('null when the domain has been deleted since'),
    email_id: z.uuid().optional(),
    broadcast_id: z.uuid().nullable().optional(),
    ...metricValues,
  })
  .meta({ id: 'EmailMetricsRow' });

export const emailMetricsOperations = [
  defineOperation({
    operationId: 'getEmailMetrics',
    method: 'get',
    path: '/emails/metrics',
    tag: 'emails',
    summary: 'Email metrics',
    description: `Counts of the team's sending over a range: totals, and rows by \`period\`, \`domain\`, \`email\` or \`broadcast\` when \`dimensions\` asks. Counts are per recipient and come from counters kept as events happen (a second behind at most for delivery events), per quarter hour, so any time zone's hours, days, weeks and months are exact, DST changes included. \`opened\` and \`clicked\` count every human open and click (machine ones, such as Apple Mail Privacy Protection and link scanners, are left out), \`unique_opened\` and \`unique_clicked\` each recipient's first. Rates are fractions from 0 to 1 (4 decimals): delivery = delivered/sent, bounce = bounced/sent, open, click, complaint and unsubscribe = unique_opened, unique_clicked, complained, unsubscribed over delivered. At most ${MAX_PERIODS} periods in the range; \`email\` cannot be combined with \`broadcast\` (as dimensions or filters). Every refusal is 422 \`validation_error\` naming the parameter.`,
    permission: 'full_access',
    scope: 'emails:read',
    query: z.object({
      start_date: oneParam(
        "ISO 8601 date (`2026-07-01`: that day's start in `timezone`) or date-time (without an offset: in `timezone`); default six days before `end_date`",
      ),
      end_date: oneParam(
        'ISO 8601 date (that whole day, in `timezone`) or date-time; later than now is now; default now',
      ),
      timezone: oneParam('IANA time zone the periods and dates are read in (`America/New_York`); default `UTC`'),
      granularity: oneParam(`Period length: ${GRANULARITIES.join(', ')}; default \`daily\`; weeks start on Monday`),
      metrics: listParam(`Which of ${METRICS.join(', ')}; default every count (${COUNTERS.length}), no rates`),
      dimensions: listParam(`Group by: ${DIMENSIONS.join(', ')}; default none (totals only, no \`data\`)`),
      domain_id: listParam(`Only these sending domains (at most ${MAX_IDS})`),
      email_id: listParam(`Only these emails (at most ${MAX_IDS})`),
      broadcast_id: listParam(`Only these broadcasts (at most ${MAX_IDS})`),
    }),
    response: z
      .object({
        object: z.literal('metrics'),
        start_date: timestamp,
        end_date: timestamp,
        metrics: z.array(z.enum(METRICS as [string, ...string[]])),
        dimensions: z.array(z.enum(DIMENSIONS)),
        granularity: z.enum(GRANULARITIES),
        totals: z.object(metricValues),
        data: z.array(metricsRow).optional().describe('Present when `dimensions` is not empty'),
      })
      .meta({ id: 'EmailMetrics' }),
    handler: async ({ auth, query, deps }) => {
      const q = readMetricsQuery(query);
      await checkOwned(deps.db, auth.team.id, q);
      const range = await resolveRange(deps.db, q);
      const answer = await queryMetrics(deps.db, auth.team.id, q, range);
      return {
        object: 'metrics' as const,
        start_date: range.start.toISOString(),
        end_date: range.end.toISOString(),
        metrics: q.metrics,
        dimensions: q.dimensions,
        granularity: q.granularity,
        ...answer,
      };
    },
  }),
];
