// The grammar of scheduled_at (CONTRACT, "Sending"), table-driven on a fixed clock: parseScheduledAt takes `now`
// (POST /emails reads the real clock, so only clock-independent cases go through the API, in
// emails-scheduled-api.test.ts).
import test from 'ava';
import { parseScheduledAt, ScheduleError } from '../shared/emails/schedule-phrase.ts';

// The grammar (CONTRACT): a fixed clock, Wednesday 2026-03-04 10:30:15.500 UTC.
const NOW = new Date('2026-03-04T10:30:15.500Z');
const at = (iso: string) => new Date(iso).getTime();
const ahead = (ms: number) => NOW.getTime() + ms;
const S = 1000;
const H = 3600_000;
const D = 86_400_000;

const accepted: [string, number][] = [
  ['in 10 sec', ahead(10 * S)],
  ['in 1 secs', ahead(S)],
  ['in 45 seconds', ahead(45 * S)],
  ['in 1 second', ahead(S)],
  ['in 2 hr', ahead(2 * H)],
  ['in 3 hrs', ahead(3 * H)],
  ['in 1 hour', ahead(H)],
  ['in 5 min', ahead(5 * 60 * S)],
  ['in 15 mins', ahead(15 * 60 * S)],
  ['in 2 days', ahead(2 * D)],
  ['in 1 week', ahead(7 * D)],
  ['in 720 hours', ahead(30 * D)],
  ['In 2 Hours', ahead(2 * H)],
  ['IN 90 SECONDS', ahead(90 * S)],
  ['  in   2   hours  ', ahead(2 * H)],
  ['today at noon', at('2026-03-04T12:00:00Z')],
  ['today at 11', at('2026-03-04T11:00:00Z')],
  ['today at 10:31', at('2026-03-04T10:31:00Z')],
  ['today at 11:59pm', at('2026-03-04T23:59:00Z')],
  ['tomorrow at midnight', at('2026-03-05T00:00:00Z')],
  ['tomorrow at 9am', at('2026-03-05T09:00:00Z')],
  ['tomorrow at 9 am', at('2026-03-05T09:00:00Z')],
  ['tomorrow at 9:45 PM', at('2026-03-05T21:45:00Z')],
  ['tomorrow at 12am', at('2026-03-05T00:00:00Z')],
  ['tomorrow at 12pm', at('2026-03-05T12:00:00Z')],
  ['tomorrow at 12:30am', at('2026-03-05T00:30:00Z')],
  ['tomorrow at 17', at('2026-03-05T17:00:00Z')],
  ['tomorrow at 7:05', at('2026-03-05T07:05:00Z')],
  ['tomorrow at 0:00', at('2026-03-05T00:00:00Z')],
  ['Tomorrow At Noon', at('2026-03-05T12:00:00Z')],
  ['TOMORROW AT MIDNIGHT', at('2026-03-05T00:00:00Z')],
  ['thursday at 8:30pm', at('2026-03-05T20:30:00Z')],
  ['friday at 9am', at('2026-03-06T09:00:00Z')],
  ['next friday at 9am', at('2026-03-06T09:00:00Z')],
  ['saturday at noon', at('2026-03-07T12:00:00Z')],
  ['sunday at midnight', at('2026-03-08T00:00:00Z')],
  ['monday at 6', at('2026-03-09T06:00:00Z')],
  ['tuesday at 23:59', at('2026-03-10T23:59:00Z')],
  // The next such day, never today (even later today).
  ['wednesday at 11pm', at('2026-03-11T23:00:00Z')],
  ['next wednesday at 9am', at('2026-03-11T09:00:00Z')],
  ['NEXT Thursday at 8:30PM', at('2026-03-05T20:30:00Z')],
  ['Next  Sunday  at  Noon', at('2026-03-08T12:00:00Z')],
  ['2026-03-05T08:00:00Z', at('2026-03-05T08:00:00Z')],
  ['2026-03-05T10:00:00+02:00', at('2026-03-05T08:00:00Z')],
  ['2026-03-04t10:31:00.250z', at('2026-03-04T10:31:00.250Z')],
];

const refused: string[] = [
  // Not the grammar.
  'next blue moon',
  'soon',
  'in 2 fortnights',
  'in 2',
  'in hours',
  'in 1.5 hours',
  'in -1 hours',
  'in two hours',
  'in 2 hours from now',
  'friday',
  'at 9am',
  'tomorrow 9am',
  'tomorrow at',
  'yesterday at 9am',
  'next tomorrow at 9am',
  'next week',
  'next today at 9am',
  'fri at 9am',
  'tomorrow at 9 a.m.',
  'tomorrow at noon pm',
  'tomorrow at 9:5',
  'tomorrow at 25',
  'tomorrow at 24:00',
  'tomorrow at 13pm',
  'tomorrow at 0am',
  'tomorrow at 9:60',
  'tomorrow at 9:00:00',
  '2026-03-05 08:00',
  '2026-03-05T08:00:00',
  '2026-02-30T08:00:00Z',
  '',
  // In the past (more than a second ago).
  'today at midnight',
  'today at 10:30',
  'today at 9am',
  '2026-03-04T10:30:14Z',
  '2001-01-01T00:00:00Z',
  // More than 30 days ahead.
  'in 31 days',
  'in 5 weeks',
  'in 721 hours',
  '2026-04-04T10:31:00Z',
];

test('scheduled_at grammar (CONTRACT): every accepted form names the instant it should, on a fixed clock', (t) => {
  t.is(NOW.getUTCDay(), 3, 'the clock is a Wednesday');
  for (const [phrase, expected] of accepted) {
    let got: number | string;
    try {
      got = parseScheduledAt(phrase, NOW).getTime();
    } catch (err) {
      got = `refused: ${(err as Error).message}`;
    }
    t.is(
      typeof got === 'number' ? new Date(got).toISOString() : got,
      new Date(expected).toISOString(),
      JSON.stringify(phrase),
    );
  }
});

test('scheduled_at grammar (CONTRACT): anything else, a past instant or more than 30 days ahead is refused', (t) => {
  for (const phrase of refused) {
    const err = t.throws(() => parseScheduledAt(phrase, NOW), undefined, JSON.stringify(phrase));
    t.true(err instanceof ScheduleError, `${JSON.stringify(phrase)}: ${err?.message}`);
  }
});

test('scheduled_at: an ISO 8601 instant must name a real day and time, never one rolled over to the next', (t) => {
  const now = new Date('2026-02-20T00:00:00Z');
  for (const text of [
    '2026-02-29T08:00:00Z',
    '2026-02-30T08:00:00Z',
    '2026-02-31T08:00:00Z',
    '2026-02-21T24:00:00Z',
    '2026-02-21T10:60Z',
    '2026-02-21T10:00:60Z',
    '2026-02-21T10:00+24:00',
    '2026-13-01T10:00Z',
    '2026-02-00T10:00Z',
  ]) {
    const err = t.throws(() => parseScheduledAt(text, now), undefined, text);
    t.is(err?.message, 'is not a valid date', text);
  }
  t.is(parseScheduledAt('2026-02-28T23:59:59.999Z', now).toISOString(), '2026-02-28T23:59:59.999Z');
  t.is(parseScheduledAt('2026-02-21T00:30:00+01:00', now).toISOString(), '2026-02-20T23:30:00.000Z');
});
