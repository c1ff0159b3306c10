// Listing received mail (mail the real MX accepted over SMTP and the real receive job processed): rows newest first,
// pagination by received-email ids, search, and date windows.
import test from 'ava';
import { isError } from './helpers/http.ts';
import { ids, startReceivingWorld, type ReceivingWorld } from './helpers/receiving-world.ts';

let w: ReceivingWorld;
test.before(async () => {
  w = await startReceivingWorld();
});
test.after.always(() => w?.close());

test('list: rows newest first without html, text, headers or received_for; pages by received-email ids', async (t) => {
  const { team, domain } = await w.receivingTeam();
  const sent: string[] = [];
  for (let i = 0; i < 5; i++)
    sent.push(
      await w.deliverOne(`in@${domain}`, {
        subject: `n${i}`,
        text: 'x',
        attachments: i === 0 ? [{ filename: 'a.txt', content: 'a' }] : [],
      }),
    );
  const newest = [...sent].reverse();
  const all = await w.p.request('GET', '/emails/receiving', { key: team.key });
  t.is(all.status, 200, all.text);
  t.is(all.body.object, 'list');
  t.false(all.body.has_more);
  t.deepEqual(ids(all), newest);
  t.deepEqual(Object.keys(all.body.data[0]).sort(), [
    'attachments',
    'bcc',
    'cc',
    'created_at',
    'dropped_reason',
    'from',
    'id',
    'message_id',
    'reply_to',
    'subject',
    'to',
  ]);
  t.deepEqual(
    all.body.data[4].attachments.map((a: { filename: string }) => a.filename),
    ['a.txt'],
  );
  t.false('download_url' in all.body.data[4].attachments[0]);

  const first = await w.p.request('GET', '/emails/receiving?limit=2', { key: team.key });
  t.deepEqual(ids(first), newest.slice(0, 2));
  t.true(first.body.has_more);
  const second = await w.p.request('GET', `/emails/receiving?limit=2&after=${newest[1]}`, { key: team.key });
  t.deepEqual(ids(second), newest.slice(2, 4));
  t.true(second.body.has_more);
  const last = await w.p.request('GET', `/emails/receiving?limit=2&after=${newest[3]}`, { key: team.key });
  t.deepEqual(ids(last), newest.slice(4));
  t.false(last.body.has_more);
  const back = await w.p.request('GET', `/emails/receiving?limit=2&before=${newest[4]}`, { key: team.key });
  t.deepEqual(ids(back), newest.slice(2, 4));
  t.true(back.body.has_more);
  isError(
    t,
    await w.p.request('GET', `/emails/receiving?after=${newest[0]}&before=${newest[1]}`, { key: team.key }),
    422,
    'validation_error',
  );
  isError(t, await w.p.request('GET', '/emails/receiving?limit=101', { key: team.key }), 422, 'validation_error');
});

test('search: a case-insensitive substring of subject, sender name or address, or any recipient; % and _ are literal', async (t) => {
  const { team, domain } = await w.receivingTeam();
  const invoice = await w.deliverOne(`billing@${domain}`, {
    from: 'Carol Jones <carol@acme.test>',
    to: `Billing <billing@${domain}>`,
    subject: 'Invoice 100% paid',
    text: 'x',
  });
  const underscore = await w.deliverOne(`sales@${domain}`, {
    from: 'dave@shop.test',
    to: `sales@${domain}`,
    cc: 'Eve Watcher <eve@watch.test>',
    subject: 'order_42 shipped',
    text: 'x',
  });
  // Only in the envelope: a blind copy names nobody in the headers.
  const blind = await w.deliverOne(`secret-desk@${domain}`, {
    from: 'frank@plain.test',
    to: 'someone@elsewhere.test',
    subject: 'Hello',
    text: 'x',
  });
  const search = async (q: string) => {
    const res = await w.p.request('GET', `/emails/receiving?search=${encodeURIComponent(q)}`, { key: team.key });
    t.is(res.status, 200, res.text);
    return ids(res).sort();
  };
  t.deepEqual(await search('INVOICE'), [invoice], 'subject, any case');
  t.deepEqual(await search('carol jones'), [invoice], 'sender name');
  t.deepEqual(await search('@ACME.test'), [invoice], 'sender address');
  t.deepEqual(await search('billing@'), [invoice], 'a To recipient');
  t.deepEqual(await search('eve watcher'), [underscore], 'a Cc recipient by name');
  t.deepEqual(await search('SECRET-DESK'), [blind], 'an envelope recipient');
  t.deepEqual(await search('100%'), [invoice], '% literal');
  t.deepEqual(await search('%'), [invoice], 'a lone % matches only a %');
  t.deepEqual(await search('0% p'), [invoice]);
  t.deepEqual(await search('_'), [underscore], '_ matches only an underscore');
  t.deepEqual(await search('order_4'), [underscore]);
  t.deepEqual(await search('order 4'), []);
  t.deepEqual(await search('ord%42'), [], '% is no wildcard');
  t.deepEqual(await search('\\'), [], 'the escape character itself is literal');
  t.deepEqual(await search('nothing like it'), []);
  t.deepEqual(await search(domain), [blind, invoice, underscore].sort());
  // The search composes with paging.
  const page = await w.p.request('GET', `/emails/receiving?search=${domain}&limit=1`, { key: team.key });
  t.true(page.body.has_more);
  t.is(page.body.data.length, 1);
  isError(t, await w.p.request('GET', '/emails/receiving?search=', { key: team.key }), 422, 'validation_error');
  isError(
    t,
    await w.p.request('GET', `/emails/receiving?search=${'a'.repeat(201)}`, { key: team.key }),
    422,
    'validation_error',
  );
  t.is((await w.p.request('GET', `/emails/receiving?search=${'a'.repeat(200)}`, { key: team.key })).status, 200);
});

test('start_date and end_date are inclusive; a date alone covers its whole UTC day', async (t) => {
  const { team, domain } = await w.receivingTeam();
  const times = [
    '2026-03-01T23:59:59.999Z',
    '2026-03-02T00:00:00.000Z',
    '2026-03-02T12:00:00.000Z',
    '2026-03-02T23:59:59.999Z',
    '2026-03-03T00:00:00.000Z',
  ];
  const made: string[] = [];
  for (const at of times) {
    const id = await w.deliverOne(`d@${domain}`, { subject: at, text: 'x' });
    // The MX stamps the arrival time; the window is tested at fixed instants around its edges.
    await w.p
      .db('received_emails')
      .where({ id })
      .update({ created_at: new Date(at) });
    made.push(id);
  }
  const window = async (query: string) => {
    const res = await w.p.request('GET', `/emails/receiving?${query}`, { key: team.key });
    t.is(res.status, 200, res.text);
    return ids(res)
      .map((id) => times[made.indexOf(id)])
      .sort();
  };
  t.deepEqual(
    await window('start_date=2026-03-02T00:00:00.000Z&end_date=2026-03-02T12:00:00.000Z'),
    times.slice(1, 3),
    'both instants inclusive',
  );
  t.deepEqual(await window('start_date=2026-03-02&end_date=2026-03-02'), times.slice(1, 4), 'one whole day');
  t.deepEqual(await window('start_date=2026-03-02T12:00:00.000Z'), times.slice(2));
  t.deepEqual(await window('end_date=2026-03-01'), times.slice(0, 1));
  t.deepEqual(
    await window('start_date=2026-03-02T13:00:00%2B01:00&end_date=2026-03-02T12:00:00Z'),
    times.slice(2, 3),
    'an offset is honoured',
  );
  t.deepEqual(await window('start_date=2026-03-02T12:00:00.000Z&end_date=2026-03-02T12:00:00.000Z'), times.slice(2, 3));
  t.deepEqual(
    await window(`start_date=2026-03-02&search=${encodeURIComponent('T12:')}`),
    times.slice(2, 3),
    'dates and search together',
  );
  isError(
    t,
    await w.p.request('GET', '/emails/receiving?start_date=2026-03-03&end_date=2026-03-02', { key: team.key }),
    422,
    'validation_error',
  );
  isError(
    t,
    await w.p.request('GET', '/emails/receiving?start_date=yesterday', { key: team.key }),
    422,
    'validation_error',
  );
  isError(
    t,
    await w.p.request('GET', '/emails/receiving?end_date=2026-13-01', { key: team.key }),
    422,
    'validation_error',
  );
});
