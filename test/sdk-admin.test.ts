// The official SDK (resend 6.38) on the resources a team administers: domains, API keys, webhooks, suppressions
// and request logs, each created, read, listed, changed and removed through the SDK's own methods against the real
// api, the answers read as the SDK's types describe them (sdk-surface.test.ts only checks every method finds a route).
import test from 'ava';
import { Resend } from 'resend';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { until } from './helpers/wait.ts';

let p: Platform;
let resend: Resend;

test.before(async () => {
  p = await startPlatform({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  const team = await p.createTeam('SDK admin');
  resend = new Resend(team.key, { baseUrl: p.url } as never);
});

test.after.always(async () => {
  await p?.close();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

test('domains: create with tracking, get, list, update, verify, remove', async (t) => {
  const created = await resend.domains.create({
    name: 'sdk-admin.test',
    openTracking: true,
    customReturnPath: 'bounce',
  });
  t.is(created.error, null, JSON.stringify(created.error));
  const d = created.data!;
  t.is(d.name, 'sdk-admin.test');
  t.is(d.status, 'not_started');
  t.regex(d.created_at, ISO);
  t.true(d.open_tracking, "the SDK's openTracking reached the api as open_tracking");
  t.false(d.click_tracking);
  t.true(d.records.length >= 3, 'SPF (MX and TXT) and DKIM records to publish');
  t.true(
    d.records.some((r) => r.record === 'SPF' && r.name === 'bounce'),
    "the SDK's customReturnPath names the return-path records",
  );

  const got = await resend.domains.get(d.id);
  t.is(got.data?.object, 'domain');
  t.is(got.data?.id, d.id);
  t.deepEqual(
    got.data?.records.map((r) => r.record),
    d.records.map((r) => r.record),
  );

  const listed = await resend.domains.list();
  t.is(listed.data?.object, 'list');
  t.true(listed.data?.data.some((x) => x.id === d.id));
  const page = await resend.domains.list({ limit: 1 });
  t.is(page.data?.data.length, 1);
  t.true(page.data?.has_more, 'the managed domain and this one: a page of one has more');

  const updated = await resend.domains.update({ id: d.id, clickTracking: true, tls: 'enforced' });
  t.is(updated.error, null, JSON.stringify(updated.error));
  t.deepEqual(updated.data, { object: 'domain', id: d.id });
  const after = await resend.domains.get(d.id);
  t.true(after.data?.click_tracking, "the SDK's clickTracking reached the api");
  t.true(after.data?.open_tracking, 'what the update left out is kept');
  // The SDK's types have `tls` on the create and update options only; the answer carries it (the mta obeys it:
  // mta-tls-enforced.test.ts).
  t.is((d as { tls?: string }).tls, 'opportunistic', 'the default');
  t.is((after.data as { tls?: string }).tls, 'enforced', "the SDK's tls reached the api");

  // The check itself is the worker's (none runs here; domains.test.ts and domain-schedule.test.ts follow it): verify
  // makes it due now, where the next one had been a day away.
  await p
    .db('domains')
    .where({ id: d.id })
    .update({ next_check_at: new Date(Date.now() + 86_400_000) });
  const verify = await resend.domains.verify(d.id);
  t.deepEqual(verify.data, { object: 'domain', id: d.id });
  const due = (await p.db('domains').where({ id: d.id }).first()).next_check_at as Date;
  t.true(due.getTime() <= Date.now(), 'a check is due now');

  const removed = await resend.domains.remove(d.id);
  t.deepEqual(removed.data, { object: 'domain', id: d.id, deleted: true });
  const gone = await resend.domains.get(d.id);
  t.is(gone.data, null);
  t.is(gone.error?.name, 'not_found');
});

test('API keys: create (the token once), list, rename, remove; the new key works and the removed one does not', async (t) => {
  const created = await resend.apiKeys.create({ name: 'sdk-made', permission: 'sending_access' });
  t.is(created.error, null, JSON.stringify(created.error));
  const { id, token } = created.data!;
  t.regex(token, /^rk_/);
  const own = new Resend(token, { baseUrl: p.url } as never);
  const refused = await own.apiKeys.list();
  t.is(refused.error?.name, 'restricted_api_key', 'a sending_access key reaches only sending');

  const listed = await resend.apiKeys.list();
  const entry = listed.data?.data.find((k) => k.id === id);
  t.is(entry?.name, 'sdk-made');
  t.regex(entry?.created_at ?? '', ISO);
  t.false(JSON.stringify(listed.data).includes(token), 'the token is never listed');

  const renamed = await resend.apiKeys.update(id, { name: 'sdk-renamed' });
  t.is(renamed.error, null, JSON.stringify(renamed.error));
  t.is(renamed.data?.id, id);
  t.is((await resend.apiKeys.list()).data?.data.find((k) => k.id === id)?.name, 'sdk-renamed');

  const removed = await resend.apiKeys.remove(id);
  t.is(removed.error, null, JSON.stringify(removed.error));
  const after = await own.emails.list();
  t.is(after.data, null);
  t.is(after.error?.name, 'invalid_api_key', 'a removed key is refused');
});

test('webhooks: create (its secret), get, list, update, rotate the secret, remove', async (t) => {
  const created = await resend.webhooks.create({
    endpoint: 'http://127.0.0.1:9/sdk-hook',
    events: ['email.delivered', 'email.bounced'],
  });
  t.is(created.error, null, JSON.stringify(created.error));
  const { id, signing_secret } = created.data!;
  t.is(created.data?.object, 'webhook');
  t.regex(signing_secret, /^whsec_/);

  const got = await resend.webhooks.get(id);
  t.is(got.data?.endpoint, 'http://127.0.0.1:9/sdk-hook');
  t.deepEqual([...(got.data?.events ?? [])].sort(), ['email.bounced', 'email.delivered']);
  t.is(got.data?.status, 'enabled');

  const listed = await resend.webhooks.list();
  t.true(listed.data?.data.some((w) => w.id === id));

  const updated = await resend.webhooks.update(id, { events: ['email.opened'], status: 'disabled' });
  t.is(updated.error, null, JSON.stringify(updated.error));
  const after = await resend.webhooks.get(id);
  t.deepEqual(after.data?.events, ['email.opened']);
  t.is(after.data?.status, 'disabled');

  const rotated = await resend.webhooks.rotateSigningSecret(id);
  t.is(rotated.error, null, JSON.stringify(rotated.error));
  t.regex(rotated.data?.signing_secret ?? '', /^whsec_/);
  t.not(rotated.data?.signing_secret, signing_secret, 'a new secret');

  t.deepEqual((await resend.webhooks.remove(id)).data, { object: 'webhook', id, deleted: true });
  t.is((await resend.webhooks.get(id)).error?.name, 'not_found');
});

test('suppressions: add, get by address and by id, list by origin, batch add and remove, remove', async (t) => {
  const added = await resend.suppressions.add({ email: 'Gone@SDK-Admin.test' });
  t.is(added.error, null, JSON.stringify(added.error));
  t.is(added.data?.object, 'suppression');
  const byEmail = await resend.suppressions.get('gone@sdk-admin.test');
  t.is(byEmail.data?.id, added.data?.id);
  t.is(byEmail.data?.origin, 'manual');
  const byId = await resend.suppressions.get(added.data!.id);
  t.is(byId.data?.email, byEmail.data?.email);

  const batch = await resend.suppressions.batch.add({ emails: ['a@sdk-admin.test', 'b@sdk-admin.test'] });
  t.is(batch.error, null, JSON.stringify(batch.error));
  t.is(batch.data?.data.length, 2);
  const manual = await resend.suppressions.list({ origin: 'manual' });
  t.is(manual.data?.data.length, 3);
  t.is((await resend.suppressions.list({ origin: 'bounce' })).data?.data.length, 0);

  const unbatched = await resend.suppressions.batch.remove({ emails: ['a@sdk-admin.test', 'b@sdk-admin.test'] });
  t.is(unbatched.error, null, JSON.stringify(unbatched.error));
  const removed = await resend.suppressions.remove('gone@sdk-admin.test');
  t.true(removed.data?.deleted);
  t.is((await resend.suppressions.list()).data?.data.length, 0);
  t.is((await resend.suppressions.get('gone@sdk-admin.test')).error?.name, 'not_found');
});

test("request logs: the SDK's own requests listed and read back, bodies included", async (t) => {
  const marker = `sdk-log-${Date.now()}`;
  await resend.apiKeys.create({ name: marker });
  // Request logs are written in batches just after the answer.
  const entry = await until(
    async () => {
      const listed = await resend.logs.list({ limit: 100 });
      return listed.data?.data.find((l) => l.endpoint === '/api-keys' && l.method === 'POST');
    },
    { what: 'the POST /api-keys log' },
  );
  t.is(entry.response_status, 201);
  t.regex(entry.user_agent ?? '', /^resend-node:/, "the SDK's User-Agent");
  const log = await resend.logs.get(entry.id);
  t.is(log.error, null, JSON.stringify(log.error));
  t.deepEqual(log.data?.request_body, { name: marker });
  t.false(JSON.stringify(log.data?.response_body).includes('rk_'), 'the token is not kept in the log');
});
