// `scheduled_at` (CONTRACT, Sending): an ISO 8601 instant, or a phrase of this grammar, case-insensitive, in
// UTC: `in <n> <unit>`; `today|tomorrow at <time>`; `[next] <weekday> at <time>`; <time> = H, H:MM, with
// optional am/pm, or noon/midnight. Anything else, a past instant, or more than 30 days ahead is refused.

export const MAX_AHEAD_MS = 30 * 24 * 3600_000;

const UNITS: Record<string, number> = {
  second: 1000,
  seconds: 1000,
  sec: 1000,
  secs: 1000,
  minute: 60_000,
  minutes: 60_000,
  min: 60_000,
  mins: 60_000,
  hour: 3600_000,
  hours: 3600_000,
  hr: 3600_000,
  hrs: 3600_000,
  day: 86_400_000,
  days: 86_400_000,
  week: 604_800_000,
  weeks: 604_800_000,
};
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

export class ScheduleError extends Error {}

function parseTime(text: string): { h: number; m: number } {
  if (text === 'noon') return { h: 12, m: 0 };
  if (text === 'midnight') return { h: 0, m: 0 };
  const t = /^(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$/.exec(text);
  if (!t) throw new ScheduleError(`\`${text}\` is not a time (H, H:MM, with am/pm, noon or midnight)`);
  let h = Number(t[1]);
  const m = t[2] ? Number(t[2]) : 0;
  if (m > 59) throw new ScheduleError(`\`${text}\` has more than 59 minutes`);
  if (t[3]) {
    if (h < 1 || h > 12) throw new ScheduleError(`\`${text}\`: with am/pm the hour is 1 to 12`);
    h = (h % 12) + (t[3] === 'pm' ? 12 : 0);
  } else if (h > 23) throw new ScheduleError(`\`${text}\` has more than 23 hours`);
  return { h, m };
}

function atTime(day: Date, time: { h: number; m: number }): Date {
  return new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), time.h, time.m));
}

function parsePhrase(phrase: string, now: Date): Date {
  const rel = /^in\s+(\d{1,6})\s+([a-z]+)$/.exec(phrase);
  if (rel) {
    const unit = UNITS[rel[2]];
    if (!unit) throw new ScheduleError(`\`${rel[2]}\` is not a unit (seconds, minutes, hours, days, weeks)`);
    return new Date(now.getTime() + Number(rel[1]) * unit);
  }
  const day =
    /^(today|tomorrow|(?:next\s+)?(sunday|monday|tuesday|wednesday|thursday|friday|saturday))\s+at\s+(.+)$/.exec(
      phrase,
    );
  if (!day)
    throw new ScheduleError('is neither an ISO 8601 instant nor a phrase such as `in 2 hours` or `tomorrow at 9am`');
  const time = parseTime(day[3].trim());
  if (day[1] === 'today') return atTime(now, time);
  if (day[1] === 'tomorrow') return atTime(new Date(now.getTime() + 86_400_000), time);
  // `<weekday>` and `next <weekday>` both mean the next such day (CONTRACT): never today.
  const ahead = (WEEKDAYS.indexOf(day[2]) - now.getUTCDay() + 7) % 7 || 7;
  return atTime(new Date(now.getTime() + ahead * 86_400_000), time);
}

/**
 * Whether an ISO 8601 text names a real day and time: `new Date` rolls 2026-02-29 over to March 1st and takes
 * 24:00, where a customer who wrote them made a mistake.
 */
function onTheCalendar(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?.*?(?:Z|[+-](\d{2}):?(\d{2}))$/i.exec(text);
  if (!m) return false;
  const [y, month, day, hour, minute, second = 0, zoneHours = 0, zoneMinutes = 0] = m
    .slice(1)
    .map((v) => (v === undefined ? undefined : Number(v)));
  const daysInMonth = new Date(Date.UTC(y!, month!, 0)).getUTCDate();
  return (
    month! >= 1 &&
    month! <= 12 &&
    day! >= 1 &&
    day! <= daysInMonth &&
    hour! <= 23 &&
    minute! <= 59 &&
    second <= 59 &&
    zoneHours <= 23 &&
    zoneMinutes <= 59
  );
}

/** The instant `input` names, validated against `now`. */
export function parseScheduledAt(input: string, now = new Date()): Date {
  const text = input.trim();
  let when: Date;
  if (ISO.test(text)) {
    when = new Date(text);
    if (Number.isNaN(when.getTime()) || !onTheCalendar(text)) throw new ScheduleError('is not a valid date');
  } else {
    when = parsePhrase(text.toLowerCase().replace(/\s+/g, ' '), now);
  }
  if (when.getTime() < now.getTime() - 1000) throw new ScheduleError('is in the past');
  if (when.getTime() > now.getTime() + MAX_AHEAD_MS) throw new ScheduleError('is more than 30 days ahead');
  return when;
}
