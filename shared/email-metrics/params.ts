// The query of GET /emails/metrics (reference/resend-api.md §1.1; docs/metrics.md), read and checked before any
// query runs: every refusal is a 422 validation_error naming the parameter. Arrays come as a comma list or as the
// parameter repeated (the SDK sends the first).
import { ServiceError } from '../errors.ts';
import { isUuid } from '../ids.ts';
import { COUNTERS, type Counter } from './counters.ts';

export const RATES = [
  'delivery_rate',
  'open_rate',
  'click_rate',
  'bounce_rate',
  'complaint_rate',
  'unsubscribe_rate',
] as const;
export type Rate = (typeof RATES)[number];
export type Metric = Counter | Rate;
export const METRICS: readonly Metric[] = [...COUNTERS, ...RATES];

/** What each rate divides, and by what. */
export const RATE_OF: Record<Rate, [Counter, Counter]> = {
  delivery_rate: ['delivered', 'sent'],
  open_rate: ['unique_opened', 'delivered'],
  click_rate: ['unique_clicked', 'delivered'],
  bounce_rate: ['bounced', 'sent'],
  complaint_rate: ['complained', 'delivered'],
  unsubscribe_rate: ['unsubscribed', 'delivered'],
};

export const DIMENSIONS = ['period', 'domain', 'email', 'broadcast'] as const;
export type Dimension = (typeof DIMENSIONS)[number];
export const GRANULARITIES = ['hourly', 'daily', 'weekly', 'monthly'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

export const MAX_PERIODS = 10_000;
export const MAX_IDS = 100;

export type RawValue = string | string[] | undefined;

export interface RawMetricsQuery {
  start_date?: RawValue;
  end_date?: RawValue;
  timezone?: RawValue;
  granularity?: RawValue;
  metrics?: RawValue;
  dimensions?: RawValue;
  domain_id?: RawValue;
  email_id?: RawValue;
  broadcast_id?: RawValue;
}

/** A bound of the range: an instant (with its offset), or a wall-clock time or date in the asked time zone. */
export type Bound =
  { kind: 'instant'; value: string } | { kind: 'local'; value: string } | { kind: 'date'; value: string };

export interface MetricsQuery {
  start: Bound | null;
  end: Bound | null;
  timezone: string;
  granularity: Granularity;
  metrics: Metric[];
  dimensions: Dimension[];
  domainIds: string[];
  emailIds: string[];
  broadcastIds: string[];
}

export function invalid(path: string, message: string): ServiceError {
  return new ServiceError('validation_error', `Invalid \`${path}\`: ${message}`, {
    status: 422,
    errors: [{ path, message }],
  });
}

/** One value: a repeated scalar parameter is refused. */
function single(path: string, v: RawValue): string | undefined {
  if (Array.isArray(v)) throw invalid(path, 'give it once.');
  return v === undefined || v === '' ? undefined : v;
}

/** A list: comma separated and/or repeated, blanks dropped, duplicates once, in the order given. */
function list(v: RawValue): string[] {
  const all = (Array.isArray(v) ? v : v === undefined ? [] : [v]).flatMap((s) => s.split(','));
  return [...new Set(all.map((s) => s.trim()).filter(Boolean))];
}

function oneOf<T extends string>(path: string, values: string[], allowed: readonly T[]): T[] {
  for (const v of values)
    if (!allowed.includes(v as T)) throw invalid(path, `\`${v}\` is not one of ${allowed.join(', ')}.`);
  return values as T[];
}

function ids(path: string, v: RawValue): string[] {
  const values = list(v).map((s) => s.toLowerCase());
  if (values.length > MAX_IDS) throw invalid(path, `at most ${MAX_IDS} ids.`);
  for (const id of values) if (!isUuid(id)) throw invalid(path, `\`${id}\` is not an id.`);
  return values;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** An ISO 8601 date or date-time; one without an offset is a wall-clock time in the asked time zone. */
function bound(path: string, v: RawValue): Bound | null {
  const text = single(path, v)?.trim();
  if (text === undefined) return null;
  const d = DATE.exec(text) ?? DATETIME.exec(text);
  const problem = invalid(path, 'use an ISO 8601 date (`2026-07-01`) or date-time (`2026-07-01T00:00:00Z`).');
  if (!d) throw problem;
  const [, y, mo, day, h = '0', mi = '0', s = '0'] = d;
  const calendar = new Date(Date.UTC(+y, +mo - 1, +day, +h, +mi, +s));
  if (
    calendar.getUTCFullYear() !== +y ||
    calendar.getUTCMonth() !== +mo - 1 ||
    calendar.getUTCDate() !== +day ||
    +h > 23 ||
    +mi > 59 ||
    +s > 59 ||
    +y < 1970 ||
    +y > 9999
  )
    throw problem;
  if (DATE.test(text)) return { kind: 'date', value: text };
  return d[7] ? { kind: 'instant', value: text } : { kind: 'local', value: text.replace(' ', 'T') };
}

/** An IANA zone name, as the time zone database spells it (`utc` → `UTC`). */
function timezone(v: RawValue): string {
  const name = single('timezone', v) ?? 'UTC';
  const problem = invalid('timezone', `\`${name}\` is not an IANA time zone (such as \`Europe/Berlin\`).`);
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/.test(name)) throw problem;
  try {
    return new Intl.DateTimeFormat('en', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    throw problem;
  }
}

/** Reads and checks the query; conflicting dimensions and filters are refused here. */
export function readMetricsQuery(raw: RawMetricsQuery): MetricsQuery {
  const metrics = oneOf('metrics', list(raw.metrics), METRICS);
  const dimensions = oneOf('dimensions', list(raw.dimensions), DIMENSIONS);
  const granularity = oneOf('granularity', [single('granularity', raw.granularity) ?? 'daily'], GRANULARITIES)[0];
  const query: MetricsQuery = {
    start: bound('start_date', raw.start_date),
    end: bound('end_date', raw.end_date),
    timezone: timezone(raw.timezone),
    granularity,
    metrics: metrics.length ? METRICS.filter((m) => metrics.includes(m)) : [...COUNTERS],
    dimensions: DIMENSIONS.filter((d) => dimensions.includes(d)),
    domainIds: ids('domain_id', raw.domain_id),
    emailIds: ids('email_id', raw.email_id),
    broadcastIds: ids('broadcast_id', raw.broadcast_id),
  };
  if (query.start?.kind === 'date' && query.end?.kind === 'date' && query.start.value > query.end.value)
    throw invalid('start_date', 'must be on or before `end_date`.');
  const byEmail = query.dimensions.includes('email') || query.emailIds.length > 0;
  const byBroadcast = query.dimensions.includes('broadcast') || query.broadcastIds.length > 0;
  if (query.dimensions.includes('email') && query.dimensions.includes('broadcast'))
    throw invalid('dimensions', '`email` and `broadcast` cannot be combined.');
  if (byEmail && byBroadcast)
    throw invalid(
      query.emailIds.length ? 'email_id' : 'broadcast_id',
      'emails and broadcasts cannot be combined: `email_id` or the `email` dimension with `broadcast_id` or the `broadcast` dimension.',
    );
  return query;
}
