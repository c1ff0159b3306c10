// Resources the declaration-driven suites need: for an operation's area (its tag), a function that creates one
// resource of that area for a team and answers its id. test/security.test.ts fails for an implemented operation
// with path parameters whose area has no fixture here, so every new area adds one when it lands.
import type { Operation } from '../../api/routes/operation.ts';
import { managedDomain, type Platform, type TestTeam } from './platform.ts';
import { fanOutSettled } from '../../shared/webhooks/fanout.ts';
import { newId } from '../../shared/ids.ts';
import { secretsKey } from '../../shared/secrets.ts';
import { storeReceivedMessage } from '../../inbound/mx/store.ts';
import { processReceived } from '../../inbound/receive/job.ts';
import { processDelivery } from '../../mta/delivery/job.ts';
import { closeDeliveryDeps, createDeliveryDeps } from '../../mta/delivery/deps.ts';
import { startImport } from './imports.ts';
import { randomUUID } from 'node:crypto';
import { signUp, verifyEmail } from '../../shared/accounts/signup.ts';
import { recordGrant } from '../../shared/oauth/grants.ts';

/**
 * The id of a new resource of the area, owned by `team`. An area whose paths carry several ids (a webhook's
 * events) answers an object naming each path parameter instead.
 */
export type Fixture = (p: Platform, team: TestTeam) => Promise<string | Record<string, string>>;

/**
 * A scheduled send from the team's managed domain to the simulator (no DNS needed, and still reschedulable), with
 * `extra` fields; its id.
 */
async function scheduledEmail(p: Platform, team: TestTeam, extra: Record<string, unknown>, what: string) {
  const managed = (await managedDomain(p, team)).name;
  const res = await p.request('POST', '/emails', {
    key: team.key,
    body: {
      from: `fixture@${managed}`,
      to: `delivered@${p.config.SIMULATOR_DOMAIN}`,
      subject: 'fixture',
      text: 'fixture',
      scheduled_at: 'in 1 hour',
      ...extra,
    },
  });
  if (res.status !== 200) throw new Error(`${what}: POST /emails answered ${res.status} ${res.text}`);
  return res.body.id as string;
}

export const fixtures: Record<string, Fixture> = {
  'api-keys': async (p, team) => {
    const res = await p.request('POST', '/api-keys', { key: team.key, body: { name: 'fixture' } });
    if (res.status !== 201) throw new Error(`api-keys fixture: POST /api-keys answered ${res.status} ${res.text}`);
    return res.body.id;
  },
  domains: async (p, team) => {
    const name = `fixture-${Math.random().toString(36).slice(2, 10)}.test`;
    const res = await p.request('POST', '/domains', { key: team.key, body: { name } });
    if (res.status !== 201) throw new Error(`domains fixture: POST /domains answered ${res.status} ${res.text}`);
    return res.body.id;
  },
  emails: (p, team) => scheduledEmail(p, team, { html: '<p>fixture</p>' }, 'emails fixture'),
  suppressions: async (p, team) => {
    const email = `fixture-${Math.random().toString(36).slice(2, 10)}@example.com`;
    const res = await p.request('POST', '/suppressions', { key: team.key, body: { email } });
    if (res.status !== 201)
      throw new Error(`suppressions fixture: POST /suppressions answered ${res.status} ${res.text}`);
    return res.body.id;
  },
  topics: async (p, team) => {
    const res = await p.request('POST', '/topics', {
      key: team.key,
      body: { name: 'fixture', default_subscription: 'opt_in' },
    });
    if (res.status !== 201) throw new Error(`topics fixture: POST /topics answered ${res.status} ${res.text}`);
    return res.body.id;
  },
  contacts: async (p, team) => {
    const email = `fixture-${Math.random().toString(36).slice(2, 10)}@example.com`;
    const res = await p.request('POST', '/contacts', { key: team.key, body: { email } });
    if (res.status !== 201) throw new Error(`contacts fixture: POST /contacts answered ${res.status} ${res.text}`);
    return res.body.id;
  },
  'contact-properties': async (p, team) => {
    const key = `fixture_${Math.random().toString(36).slice(2, 10)}`;
    const res = await p.request('POST', '/contact-properties', { key: team.key, body: { key, type: 'string' } });
    if (res.status !== 201)
      throw new Error(`contact-properties fixture: POST /contact-properties answered ${res.status} ${res.text}`);
    return res.body.id;
  },
  segments: async (p, team) => {
    const res = await p.request('POST', '/segments', { key: team.key, body: { name: 'fixture' } });
    if (res.status !== 201) throw new Error(`segments fixture: POST /segments answered ${res.status} ${res.text}`);
    return res.body.id;
  },
  templates: async (p, team) => {
    const res = await p.request('POST', '/templates', { key: team.key, body: { name: 'fixture', html: '<p>x</p>' } });
    if (res.status !== 201) throw new Error(`templates fixture: POST /templates answered ${res.status} ${res.text}`);
    return res.body.id;
  },
  broadcasts: async (p, team) => {
    // A draft to a segment of the team, from its managed domain (a draft is never checked against its sender).
    const segment = (await fixtures.segments(p, team)) as string;
    const from = `news@${(await managedDomain(p, team)).name}`;
    const res = await p.request('POST', '/broadcasts', {
      key: team.key,
      body: { segment_id: segment, from, subject: 'fixture', html: '<p>x</p>' },
    });
    if (res.status !== 201) throw new Error(`broadcasts fixture: POST /broadcasts answered ${res.status} ${res.text}`);
    return res.body.id;
  },
  webhooks: async (p, team) => {
    // An endpoint (never sent to here) and one event of it: a suppression added after it, fanned out.
    const res = await p.request('POST', '/webhooks', {
      key: team.key,
      body: { endpoint: 'https://example.com/hook', events: ['suppression.added'] },
    });
    if (res.status !== 201) throw new Error(`webhooks fixture: POST /webhooks answered ${res.status} ${res.text}`);
    const webhook_id: string = res.body.id;
    await fixtures.suppressions(p, team);
    await fanOutSettled(p.db);
    const delivery = await p.db('webhook_deliveries').where({ endpoint_id: webhook_id }).first();
    if (!delivery) throw new Error('webhooks fixture: the event was not fanned out');
    return { webhook_id, event_id: delivery.id };
  },
  receiving: (p, team) => receivedEmail(p, team),
  oauth: async (p, team) => {
    // A grant as the consent step records it, by a person of the team (the grant's storage is oidc-provider's).
    const { token } = await signUp(p.db, {
      email: `fixture-${randomUUID()}@people.test`,
      password: 'correct horse battery',
      name: 'Fixture',
    });
    const user = await verifyEmail(p.db, token);
    const row = await recordGrant(p.db, {
      provider_grant_id: randomUUID(),
      team_id: team.id,
      user_id: user.id,
      client_id: 'fixture-client',
      scopes: ['domains:read'],
      resources: [`${p.config.PUBLIC_BASE_URL}/`],
    });
    return row.id;
  },
  logs: async (p, team) => {
    const res = await p.request('GET', '/team', { key: team.key });
    const id = res.headers.get('x-request-log-id');
    if (!id) throw new Error(`logs fixture: GET /team answered ${res.status} without X-Request-Log-Id`);
    return id;
  },
};

/**
 * A valid body for each implemented operation that has both path parameters and a body, so a cross-team
 * request gets past body validation and reaches the lookup that must answer 404.
 */
export const sampleBodies: Record<string, unknown> = {
  updateEmail: { scheduled_at: 'in 2 hours' },
  updateApiKey: { name: 'renamed by another team' },
  updateDomain: { open_tracking: true },
  autoconfigureDomain: { server: '192.0.2.53', key_name: 'update-key', secret: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtMzI=' },
  uploadDomainBrandLogo: { svg: '<svg/>' },
  shareEmail: { expires_in: '1 hour' },
  updateWebhook: { status: 'enabled' },
  updateTopic: { name: 'renamed by another team' },
  updateContact: { first_name: 'Renamed by another team' },
  updateContactTopics: { topics: [] },
  updateContactProperty: { fallback_value: 'changed by another team' },
  updateSegment: { name: 'renamed by another team' },
  createAudienceContact: { email: 'created-by-another-team@example.com' },
  updateAudienceContact: { first_name: 'Renamed by another team' },
  updateTemplate: { name: 'renamed by another team' },
  checkTemplate: {},
  updateBroadcast: { name: 'renamed by another team' },
  sendBroadcast: {},
};

export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]);
}

/** `op.path` with every `{param}` replaced: from `values` when it names the parameter, otherwise `fallback`. */
export function fillPath(path: string, values: string | Record<string, string>): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, (_, name: string) => {
    const v = typeof values === 'string' ? values : values[name];
    if (v === undefined) throw new Error(`no value for path parameter {${name}} of ${path}`);
    return encodeURIComponent(v);
  });
}

/**
 * Operations whose path id names something other than their area's resource, keyed by operationId: a domain
 * claim is found by the `domain_id` its claim allocated, which no domain of the team has before it completes.
 */
const domainClaim: Fixture = async (p, team) => {
  const holder = await p.createTeam('Claim fixture holder');
  const name = `claimed-${Math.random().toString(36).slice(2, 10)}.test`;
  const created = await p.request('POST', '/domains', { key: holder.key, body: { name } });
  if (created.status !== 201)
    throw new Error(`domain claim fixture: POST /domains answered ${created.status} ${created.text}`);
  // Verified by the holder (no DNS in this suite): what makes the name claimable.
  await p.db('domains').where({ id: created.body.id }).update({ status: 'verified', verified_at: new Date() });
  const res = await p.request('POST', '/domains/claim', { key: team.key, body: { name } });
  if (res.status !== 201)
    throw new Error(`domain claim fixture: POST /domains/claim answered ${res.status} ${res.text}`);
  return res.body.domain_id;
};
/** The smallest logo that passes the SVG Tiny PS check. */
export const tinyPsLogo =
  '<svg xmlns="http://www.w3.org/2000/svg" version="1.2" baseProfile="tiny-ps" viewBox="0 0 10 10"><title>Fixture</title><rect width="10" height="10" fill="#123456"/></svg>';

/** A domain with a brand logo, so the owner still reads `/domains/{id}/brand/logo` after another team tried. */
const domainWithLogo: Fixture = async (p, team) => {
  const id = (await fixtures.domains(p, team)) as string;
  const res = await p.request('PUT', `/domains/${id}/brand/logo`, { key: team.key, body: { svg: tinyPsLogo } });
  if (res.status !== 200)
    throw new Error(`brand logo fixture: PUT /domains/${id}/brand/logo answered ${res.status} ${res.text}`);
  return id;
};
/** An email with one attachment (managed domain to the simulator, scheduled): both ids of its attachment routes. */
const emailAttachment: Fixture = async (p, team) => {
  const id = await scheduledEmail(
    p,
    team,
    { attachments: [{ filename: 'fixture.txt', content: Buffer.from('fixture').toString('base64') }] },
    'email attachment fixture',
  );
  const list = await p.request('GET', `/emails/${id}/attachments`, { key: team.key });
  if (list.status !== 200)
    throw new Error(`email attachment fixture: GET attachments answered ${list.status} ${list.text}`);
  return { email_id: id, attachment_id: list.body.data[0].id };
};
/**
 * An email with one delivery attempt, for both ids of its attempt routes: the managed domain to the simulator,
 * delivered by the mta's own deliver job (the simulator needs no network, so no DNS or SMTP peer either).
 */
const emailAttempt: Fixture = async (p, team) => {
  const managed = (await managedDomain(p, team)).name;
  const res = await p.request('POST', '/emails', {
    key: team.key,
    body: {
      from: `fixture@${managed}`,
      to: `delivered@${p.config.SIMULATOR_DOMAIN}`,
      subject: 'fixture',
      text: 'fixture',
    },
  });
  if (res.status !== 200) throw new Error(`email attempt fixture: POST /emails answered ${res.status} ${res.text}`);
  const deps = createDeliveryDeps(p.config, { db: p.db, blobs: p.deps.blobs, log: p.deps.log }, { signingThreads: 0 });
  try {
    await processDelivery(deps, res.body.id);
  } finally {
    await closeDeliveryDeps(deps);
  }
  const attempt = await p.db('delivery_attempts').where({ email_id: res.body.id }).first('id');
  if (!attempt) throw new Error('email attempt fixture: the deliver job recorded no attempt');
  return { email_id: res.body.id, attempt_id: attempt.id };
};
/**
 * A received email with text, HTML and one attachment, for both ids of the receiving routes: a receiving domain of
 * the team, the message stored by the MX's own store and turned into a received email by the real receive job (only
 * the SMTP conversation is skipped; test/receiving-api.test.ts delivers over SMTP).
 */
const receivedEmail: Fixture = async (p, team) => {
  const domainId = newId();
  const name = `rx-${Math.random().toString(36).slice(2, 10)}.test`;
  await p.db('domains').insert({ id: domainId, team_id: team.id, name, status: 'verified', receiving: 'enabled' });
  const raw = Buffer.from(
    [
      'From: Fixture <fixture@sender.test>',
      `To: inbox@${name}`,
      'Subject: fixture',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: multipart/alternative; boundary="alt"',
      '',
      '--alt',
      'Content-Type: text/plain',
      '',
      'fixture',
      '--alt',
      'Content-Type: text/html',
      '',
      '<p>fixture</p>',
      '--alt--',
      '--b',
      'Content-Type: text/plain; name="a.txt"',
      'Content-Disposition: attachment; filename="a.txt"',
      '',
      'attached',
      '--b--',
      '',
    ].join('\r\n'),
  );
  const [email_id] = await storeReceivedMessage(p.db, p.deps.blobs, {
    raw,
    envelopeFrom: 'fixture@sender.test',
    recipients: [{ address: `inbox@${name}`, recipient: { kind: 'mail', teamId: team.id, domainId } }],
    remoteIp: '127.0.0.1',
    helo: 'sender.test',
    tls: false,
    byHost: 'mx.test',
  });
  await processReceived({ db: p.db, blobs: p.deps.blobs, log: p.deps.log, secrets: secretsKey(p.config) }, email_id);
  const attachment = await p.db('received_attachments').where({ email_id }).first('id');
  if (!attachment) throw new Error('receiving fixture: the receive job stored no attachment');
  return { email_id, attachment_id: attachment.id };
};
/** A contact that is a member of a segment: the ids of the membership and audience-contact routes. */
const member = async (p: Platform, team: TestTeam) => {
  const segment = (await fixtures.segments(p, team)) as string;
  const contact = (await fixtures.contacts(p, team)) as string;
  const res = await p.request('POST', `/contacts/${contact}/segments/${segment}`, { key: team.key });
  if (res.status !== 201) throw new Error(`membership fixture: answered ${res.status} ${res.text}`);
  return { id_or_email: contact, segment_id: segment, audience_id: segment };
};
/** A contact import of the team (queued is enough: its id is what the paths name). */
const contactImport: Fixture = (p, team) => startImport(p, team, 'email\nimported@fixture.test\n');

export const operationFixtures: Record<string, Fixture> = {
  getContactImport: contactImport,
  listContactImportFailures: contactImport,
  addContactToSegment: member,
  removeContactFromSegment: member,
  getAudienceContact: member,
  updateAudienceContact: member,
  deleteAudienceContact: member,
  // An audience's contacts paths name the audience (a segment) alone.
  createAudienceContact: (p, team) => fixtures.segments(p, team),
  listAudienceContacts: (p, team) => fixtures.segments(p, team),
  getDomainClaim: domainClaim,
  verifyDomainClaim: domainClaim,
  getEmailAttachment: emailAttachment,
  getEmailAttempt: emailAttempt,
  getDomainBrandLogo: domainWithLogo,
  uploadDomainBrandLogo: domainWithLogo,
  deleteDomainBrandLogo: domainWithLogo,
  getTemplatePreviewPage: async (p, team) => {
    const res = await p.request('POST', '/template-previews', { key: team.key, body: { html: '<p>x</p>' } });
    if (res.status !== 201) throw new Error(`template preview fixture: answered ${res.status} ${res.text}`);
    return res.body.id;
  },
};

export function fixtureFor(op: Pick<Operation, 'tag' | 'operationId'>): Fixture | undefined {
  return operationFixtures[op.operationId] ?? fixtures[op.tag];
}
