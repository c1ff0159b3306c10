// A template send with the processes as production runs them: the SDK against the api process (api/main.ts), the
// mta process (mta/main.ts) taking the deliver job from the queue and delivering to a loopback MX found through the
// loopback DNS; the message the MX received, parsed, is the template's published version rendered with the send's
// values (escaped in html), DKIM-signed.
import test from 'ava';
import { Resend } from 'resend';
import { simpleParser } from 'mailparser';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { senderTeam } from './helpers/topic-sends.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { freePort } from './helpers/ports.ts';

let w: MtaWorld;
const procs: EntryProcess[] = [];
let apiUrl: string;

test.before(async () => {
  w = await startMtaWorld();
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  const api = startEntry('api/main.ts', w.p.config, { PORT: String(port), METRICS_API_PORT: '0' });
  const mta = startEntry('mta/main.ts', w.p.config, { SMTP_SUBMISSION_PORT: '0', SMTP_SUBMISSION_TLS_PORT: '0' });
  procs.push(api, mta);
  // Starting takes seconds alone and far longer while other suites run on the same two cores.
  await Promise.all([api.logged('api.listening', 120_000), mta.logged('mta.started', 120_000)]);
});
test.after.always(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await w?.close();
});

test('the SDK sends a template through the api process; the mta process delivers the rendered message', async (t) => {
  t.timeout(120_000);
  const { team, from } = await senderTeam(w, 'proc-shop.test');
  w.mx('proc-inbox.test');
  const resend = new Resend(team.key, { baseUrl: apiUrl } as never);
  const created = await resend.templates
    .create({
      name: 'Welcome',
      alias: 'welcome',
      from,
      subject: 'Welcome, {{{NAME}}}',
      html: '<p>Welcome, {{{NAME}}}! Your plan: {{{PLAN|Free}}}.</p>',
      text: 'Welcome, {{{NAME}}}! Your plan: {{{PLAN|Free}}}.',
      variables: [
        { key: 'NAME', type: 'string' },
        { key: 'PLAN', type: 'string' },
      ],
    })
    .publish();
  t.is(created.error, null, JSON.stringify(created.error));

  const sent = await resend.emails.send({
    to: 'new@proc-inbox.test',
    template: { id: 'welcome', variables: { NAME: 'Zoë <admin>' } },
  });
  t.is(sent.error, null, JSON.stringify(sent.error));
  await w.sink.waitFor(() => w.sink.deliveredTo('new@proc-inbox.test').length > 0, 60_000);
  const [message] = w.sink.deliveredTo('new@proc-inbox.test');
  const mail = await simpleParser(message.raw);
  t.is(mail.subject, 'Welcome, Zoë <admin>');
  t.is(mail.html, '<p>Welcome, Zoë &lt;admin&gt;! Your plan: Free.</p>');
  t.is(mail.text?.trim(), 'Welcome, Zoë <admin>! Your plan: Free.');
  t.regex(message.raw.toString(), new RegExp(`Message-ID: <${sent.data!.id}@proc-shop\\.test>`, 'i'));
  t.deepEqual(
    (await w.verifyDkim(message.raw)).map((d) => d.status),
    ['pass'],
  );
  const stored = await w.p.db('emails').where({ id: sent.data!.id }).first();
  t.is(stored.html, mail.html, 'what is stored is what was delivered');
});
