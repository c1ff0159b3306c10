// GET /emails/{email_id}/events (issue #22: the dashboard's timeline): a send through POST /emails with one
// recipient on the team's suppression list, delivered by the mta's deliver job to the loopback sink, then a late
// RFC 3464 bounce for one delivered recipient arriving at the real MX and read by the receive job. The events come
// back oldest first with the recipients each names and its details as recorded, paged by event ids; the MCP
// resource's story tells the same rows (shared/emails/story.ts); nothing of another team's.
import test, { type ExecutionContext } from 'ava';
import { RCPT, dsn, startBounceWorld, type BounceWorld } from './helpers/bounce-world.ts';
import { isError } from './helpers/http.ts';
import { processDelivery } from '../mta/delivery/job.ts';
import { processReceived } from '../inbound/receive/job.ts';
import { liftSandbox } from '../shared/teams/teams.ts';
import { loadStory, renderStory } from '../shared/emails/story.ts';

let b: BounceWorld;
test.before(async () => {
  b = await startBounceWorld();
  await liftSandbox(b.w.p.db, b.team.id, 'us-east-1');
});
test.after.always(() => b?.close());

interface ApiEvent {
  object: string;
  id: string;
  email_id: string;
  type: string;
  created_at: string;
  to: string[];
  bounce: { type: string; subType: string; message: string; diagnosticCode?: string[] } | null;
  click: unknown;
  suppressed: { type: string; reason: string; message: string } | null;
  failed: unknown;
}

const eventsOf = async (id: string, query = '', key = b.team.key) =>
  b.w.p.request('GET', `/emails/${id}/events${query}`, { key });

test('an email told by its events: sent, suppressed, delivered, then a late bounce; oldest first, paged, the team only', async (t) => {
  const { w, team, domain, deps } = b;
  const added = await w.p.request('POST', '/suppressions', { key: team.key, body: { email: `carl@${RCPT}` } });
  t.is(added.status, 201, added.text);
  const sent = await w.p.request('POST', '/emails', {
    key: team.key,
    body: {
      from: `Shop <shop@${domain.name}>`,
      to: [`ann@${RCPT}`, `bob@${RCPT}`],
      cc: [`carl@${RCPT}`],
      subject: 'Events',
      text: 'Hello',
    },
  });
  t.is(sent.status, 200, sent.text);
  const id: string = sent.body.id;
  const first = await eventsOf(id);
  t.is(first.status, 200, first.text);
  t.deepEqual(
    (first.body.data as ApiEvent[]).map((e) => [e.type, e.to]),
    [
      ['email.sent', [`ann@${RCPT}`, `bob@${RCPT}`]],
      ['email.suppressed', [`carl@${RCPT}`]],
    ],
    'accepted: sent to its To recipients, the suppressed one named',
  );

  await processDelivery(w.deps, id);
  const copy = w.sink.messages.find((m) => m.raw.toString().includes(`<${id}@`));
  t.truthy(copy, 'the sink received the email');
  // bob's mailbox is gone after all: its server's DSN comes back to the return path a while later.
  const report = await b.report(
    copy!.from,
    dsn({
      rcpt: `bob@${RCPT}`,
      action: 'failed',
      status: '5.1.1',
      diagnostic: `smtp; 550 5.1.1 <bob@${RCPT}>: Recipient address rejected: User unknown`,
    }),
  );
  t.is(await processReceived(deps, report), 'processed');

  const all = await eventsOf(id, '?limit=100');
  t.is(all.status, 200, all.text);
  t.false(all.body.has_more);
  const events = all.body.data as ApiEvent[];
  t.deepEqual(
    events.map((e) => [e.type, e.to]),
    [
      ['email.sent', [`ann@${RCPT}`, `bob@${RCPT}`]],
      ['email.suppressed', [`carl@${RCPT}`]],
      ['email.delivered', [`ann@${RCPT}`, `bob@${RCPT}`]],
      ['email.bounced', [`bob@${RCPT}`]],
    ],
  );
  for (const e of events) {
    t.is(e.object, 'email_event');
    t.is(e.email_id, id);
    t.regex(e.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  }
  const times = events.map((e) => e.created_at);
  t.deepEqual([...times].sort(), times, 'oldest first');
  const [sentEvent, suppressed, delivered, bounced] = events;
  t.like(suppressed, {
    suppressed: { type: 'OnAccountSuppressionList', reason: 'manual' },
    bounce: null,
    click: null,
    failed: null,
  });
  t.like(bounced, { bounce: { type: 'Permanent', subType: 'NoEmail' }, suppressed: null });
  t.regex(bounced.bounce!.diagnosticCode!.join(' '), /User unknown/);
  t.like(sentEvent, { bounce: null, click: null, suppressed: null, failed: null });
  t.like(delivered, { bounce: null });

  // Pages of one by event ids, forwards and back.
  const page = async (query: string) => {
    const res = await eventsOf(id, query);
    t.is(res.status, 200, res.text);
    return { has_more: res.body.has_more, ids: (res.body.data as ApiEvent[]).map((e) => e.id) };
  };
  t.deepEqual(await page('?limit=1'), { has_more: true, ids: [sentEvent.id] });
  t.deepEqual(await page(`?limit=2&after=${sentEvent.id}`), { has_more: true, ids: [suppressed.id, delivered.id] });
  t.deepEqual(await page(`?limit=2&after=${delivered.id}`), { has_more: false, ids: [bounced.id] });
  t.deepEqual(await page(`?limit=2&before=${bounced.id}`), { has_more: true, ids: [suppressed.id, delivered.id] });
  t.deepEqual(await page(`?limit=2&before=${suppressed.id}`), { has_more: false, ids: [sentEvent.id] });

  // The MCP resource's story reads the same rows.
  const story = await loadStory(w.p.db, team.id, id);
  t.deepEqual(
    story.events.map((e) => e.type),
    events.map((e) => e.type),
  );
  t.regex(renderStory(story), new RegExp(`email\\.bounced \\| bob@${RCPT.replace('.', '\\.')} \\| Permanent NoEmail`));

  await refusals(t, id);
});

/** A cursor of another email's, a malformed one, too big a page; another team's email and none at all. */
async function refusals(t: ExecutionContext, id: string) {
  const { w, team, domain } = b;
  const another = await w.p.request('POST', '/emails', {
    key: team.key,
    body: { from: `shop@${domain.name}`, to: `dan@${RCPT}`, subject: 'Other', text: 'x', scheduled_at: 'in 1 hour' },
  });
  const foreign = (await eventsOf(another.body.id)).body.data[0] as ApiEvent;
  t.is(foreign.type, 'email.scheduled');
  const refused = await eventsOf(id, `?after=${foreign.id}`);
  isError(t, refused, 422, 'validation_error');
  t.deepEqual(refused.body.errors, [{ path: 'after', message: 'not an event of this email' }]);
  isError(t, await eventsOf(id, '?after=not-an-id'), 422, 'validation_error');
  isError(t, await eventsOf(id, '?limit=101'), 422, 'validation_error');
  const stranger = await w.p.createTeam();
  isError(t, await eventsOf(id, '', stranger.key), 404, 'not_found');
  isError(t, await eventsOf('00000000-0000-4000-8000-000000000000'), 404, 'not_found');
}
