// The official SDK's broadcasts methods (resend 6.38), unchanged, against the real api: create, get, list, update,
// send (now and scheduled), cancel, duplicate, remove, recipients and clickedLinks.
import test from 'ava';
import { Resend } from 'resend';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { audience, fanOutAndDeliver, type Audience } from './helpers/broadcasts.ts';

let w: MtaWorld;
let a: Audience;
let resend: Resend;
test.before(async () => {
  w = await startMtaWorld();
  w.mx('sdk-inbox.test');
  a = await audience(w, 'sdk-news.test', [{ email: 'reader@sdk-inbox.test', first_name: 'Rea' }]);
  resend = new Resend(a.team.key, { baseUrl: w.p.url } as never);
});
test.after.always(async () => {
  await w?.close();
});

const content = () => ({
  segmentId: a.segment,
  from: a.from,
  subject: 'Hello {{{FIRST_NAME|there}}}',
  html: '<p>Hi {{{FIRST_NAME|there}}}</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
  name: 'SDK',
});

test('create, get, list, update, duplicate, remove a draft', async (t) => {
  const made = await resend.broadcasts.create(content());
  t.is(made.error, null);
  const id = made.data!.id;
  const got = await resend.broadcasts.get(id);
  t.like(got.data, { id, object: 'broadcast', status: 'draft', segment_id: a.segment, name: 'SDK' });
  const updated = await resend.broadcasts.update(id, {
    subject: 'Changed',
    previewText: 'Preview',
    replyTo: ['r@sdk-news.test'],
  });
  t.is(updated.error, null);
  t.like((await resend.broadcasts.get(id)).data, {
    subject: 'Changed',
    preview_text: 'Preview',
    reply_to: ['r@sdk-news.test'],
  });
  const listed = await resend.broadcasts.list();
  t.true(listed.data!.data.some((b) => b.id === id));
  const copy = await resend.broadcasts.duplicate(id);
  t.truthy(copy.data?.id);
  const removed = await resend.broadcasts.remove(copy.data!.id);
  t.like(removed.data, { id: copy.data!.id, deleted: true });
  const missing = await resend.broadcasts.get(copy.data!.id);
  t.is(missing.error?.name, 'not_found');
});

test('send, then the recipients report and clicked links; a scheduled one cancels', async (t) => {
  const made = await resend.broadcasts.create(content());
  const id = made.data!.id;
  const sent = await resend.broadcasts.send(id);
  t.is(sent.error, null);
  t.is(sent.data?.id, id);
  t.is((await fanOutAndDeliver(w, id)).outcome, 'sent');
  t.is((await resend.broadcasts.get(id)).data?.status, 'sent');
  const recipients = await resend.broadcasts.recipients(id, { type: 'delivered' });
  t.is(recipients.error, null);
  t.deepEqual(
    recipients.data!.data.map((r) => r.email),
    ['reader@sdk-inbox.test'],
  );
  const links = await resend.broadcasts.clickedLinks(id);
  t.deepEqual(links.data?.data, []);

  const later = await resend.broadcasts.create({ ...content(), send: true, scheduledAt: 'tomorrow at 9am' });
  t.is(later.error, null);
  t.is((await resend.broadcasts.get(later.data!.id)).data?.status, 'scheduled' as never);
  t.is((await resend.broadcasts.cancel(later.data!.id)).error, null);
  t.is((await resend.broadcasts.get(later.data!.id)).data?.status, 'canceled' as never);
  const refused = await resend.broadcasts.send(later.data!.id);
  t.is(refused.error?.name, 'validation_error');
});
