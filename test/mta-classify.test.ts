// The bounce rules as data, each with its fixtures: every example of a rule lands on that rule (so a rule added
// above another cannot take its cases unnoticed), and the verdicts of the replies that matter most.
import test from 'ava';
import { bounceRules } from '../shared/bounces/rules.ts';
import { classify, findRule, parseExample, parseReply } from '../shared/bounces/classify.ts';

for (const rule of bounceRules) {
  test(`rule ${rule.name}: its examples land on it`, (t) => {
    t.true(rule.examples.length > 0);
    for (const example of rule.examples) t.is(findRule(parseExample(example)).name, rule.name, example);
  });
}

test('rule names are unique and the last rule catches everything', (t) => {
  t.is(new Set(bounceRules.map((r) => r.name)).size, bounceRules.length);
  const last = bounceRules[bounceRules.length - 1];
  t.true(!last.code && !last.enhanced && !last.text && !last.error);
});

test('parseReply: code, enhanced code (only when its class agrees), multi-line text', (t) => {
  t.deepEqual(parseReply('550 5.1.1 <a@b.c>: User unknown'), {
    code: 550,
    enhanced: '5.1.1',
    text: '550 5.1.1 <a@b.c>: User unknown',
  });
  t.deepEqual(parseReply('550-5.7.1 first\n550 5.7.1 second'), {
    code: 550,
    enhanced: '5.7.1',
    text: '550 5.7.1 first 5.7.1 second',
  });
  t.is(parseReply('550 4.2.2 mixed classes')?.enhanced, null);
  t.is(parseReply('421 Service not available')?.enhanced, null);
  t.is(parseReply('garbage'), null);
});

test('verdicts: 2xx delivers, 4xx defers, 5xx bounces with its type; failures without a reply defer', (t) => {
  const v = (line: string) => classify(parseExample(line));
  t.is(v('250 2.0.0 Ok').action, 'deliver');
  t.is(v('451 4.3.0 Local error').action, 'defer');
  t.like(v('550 5.1.1 No such user'), { action: 'bounce', bounce: { type: 'Permanent', subType: 'NoEmail' } });
  t.like(v('550 Requested action not taken: mailbox unavailable'), {
    action: 'bounce',
    bounce: { type: 'Permanent', subType: 'General' },
  });
  t.like(v('552 5.2.2 Mailbox full'), { action: 'bounce', bounce: { type: 'Transient', subType: 'MailboxFull' } });
  t.like(v('554 5.7.1 Blocked using zen.spamhaus.org'), {
    action: 'bounce',
    bounce: { type: 'Transient', subType: 'General' },
  });
  t.like(v('!ECONNREFUSED connect ECONNREFUSED'), { action: 'defer', code: 421, enhanced: '4.4.2' });
});

test('our own error is a 451 4.3.0 deferral, never a bounce', (t) => {
  const verdict = classify({ error: 'ELOCAL', message: 'TypeError: x is undefined' });
  t.like(verdict, { action: 'defer', rule: 'local-error', code: 451, enhanced: '4.3.0' });
  t.is(verdict.bounce, undefined);
});
