// The segment filter language as the reference shows it: the field (shared/segments/filter-schema.ts, which also
// documents each operator), the language in words for POST /segments, and request examples that test/openapi.test.ts
// parses through the body schema the api uses.
import {
  DAYS_MAX,
  FILTER_MAX_CONDITIONS,
  FILTER_MAX_DEPTH,
  segmentFilter,
} from '../../shared/segments/filter-schema.ts';

export const segmentFilterField = segmentFilter;

export const filterDescription = `**The filter language.** A filter is a group or a condition:

- \`{"all": [...]}\`: every filter in the list matches; \`{"any": [...]}\`: at least one does; \`{"not": filter}\`: the
  filter does not. Groups nest up to ${FILTER_MAX_DEPTH} deep, with at most ${FILTER_MAX_CONDITIONS} conditions in all.
- A condition is an object with \`field\` and \`operator\`, and \`value\`, \`key\`, \`topic_id\` or \`days\` as the field needs:

| field | operators | with |
| --- | --- | --- |
| \`email\` | \`equals\`, \`not_equals\` (without regard to case), \`contains\`, \`starts_with\`, \`ends_with\` (without regard to case) | \`value\`: a string |
| \`first_name\`, \`last_name\` | \`equals\`, \`not_equals\` (exact), \`contains\`, \`starts_with\`, \`ends_with\` (without regard to case); \`is_set\`, \`is_not_set\` | \`value\` (not for is_set / is_not_set) |
| \`property\` | string: \`equals\`, \`not_equals\`, \`contains\`, \`starts_with\`, \`ends_with\`; number: \`equals\`, \`not_equals\`, \`greater_than\`, \`greater_than_or_equal\`, \`less_than\`, \`less_than_or_equal\`; boolean: \`equals\`, \`not_equals\`; any type: \`is_set\`, \`is_not_set\` | \`key\`: a contact property of the team; \`value\` of its type |
| \`topic\` | \`subscribed\` (the address chose opt_in, or made no choice and the topic's default is opt_in), \`not_subscribed\` | \`topic_id\`: a topic of the team |
| \`created_at\` | \`before\`, \`after\` | \`value\`: an ISO 8601 date and time |
| \`created_at\` | \`within_last_days\` | \`days\`: 1-${DAYS_MAX} |
| \`unsubscribed\` | \`equals\` | \`value\`: true or false |
| \`received\`, \`opened\`, \`clicked\` | \`within_last_days\`, \`not_within_last_days\` | \`days\`: 1-${DAYS_MAX} |

Every condition is true or false for every contact: a contact without the name or property value matches
\`not_equals\` and \`is_not_set\` and no other operator (a property's fallback value does not count). \`received\` is
a copy of the team's mail delivered to the contact's address (\`email.delivered\`), \`opened\` and \`clicked\` the
tracked opens and clicks; \`not_within_last_days\` also matches an address that never did. A segment's members are
its hand-added contacts and the contacts its filter matches, computed at each read: a contact that changes joins or
leaves at once. An unknown property key, a value of the wrong type, an operator the property's type does not take or
a topic that is not the team's is a 422 naming its place in the filter (\`filter.all.1.value\`), as is a filter nested
too deep or with too many conditions.`;

export const filterExamples = {
  byHand: { summary: 'Members added by hand only', value: { name: 'VIP customers' } },
  engagedTrials: {
    summary: 'Trial accounts that opened mail in the last 30 days and signed up this year',
    value: {
      name: 'Engaged trials',
      filter: {
        all: [
          { field: 'property', key: 'plan', operator: 'equals', value: 'trial' },
          { field: 'opened', operator: 'within_last_days', days: 30 },
          { field: 'created_at', operator: 'after', value: '2026-01-01T00:00:00Z' },
        ],
      },
    },
  },
  winBack: {
    summary: 'Subscribers to a topic who received nothing for 90 days, or whose address is at example.com',
    value: {
      name: 'Win back',
      filter: {
        all: [
          { field: 'topic', topic_id: '0192f1d2-7c1a-7b8e-9f00-3c5d2e1a4b6c', operator: 'subscribed' },
          { field: 'unsubscribed', operator: 'equals', value: false },
          {
            any: [
              { field: 'received', operator: 'not_within_last_days', days: 90 },
              { field: 'email', operator: 'ends_with', value: '@example.com' },
            ],
          },
          { not: { field: 'property', key: 'seats', operator: 'greater_than', value: 50 } },
        ],
      },
    },
  },
};
