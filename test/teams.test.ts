// Teams of people: creating one (admin, managed domain, a first key on request), Me and switching, renaming, roles
// (viewers read, members work, admins manage), the last admin kept, invitations mailed and accepted by the invited
// address only, and the members' verified addresses as the team's sandbox identities.
import test from 'ava';
import {
  CookieClient,
  linkToken,
  PEOPLE,
  signedIn,
  signUpAndVerify,
  startAccountsWorld,
  type AccountsWorld,
} from './helpers/accounts.ts';
import { managedDomain } from './helpers/platform.ts';

let world: AccountsWorld;
test.before(async () => {
  world = await startAccountsWorld();
});
test.after.always(async () => {
  await world?.close();
});

/** A person with an account, signed in. */
async function person(local: string) {
  const email = `${local}@${PEOPLE}`;
  const id = await signUpAndVerify(world, email);
  return { id, email, c: await signedIn(world, email) };
}

/** `who` invites `email` with `role`; the token of the mailed link. */
async function invite(who: CookieClient, teamId: string, email: string, role: string) {
  const before = world.w.sink.deliveredTo(email).length;
  const res = await who.request('POST', `/teams/${teamId}/invitations`, { body: { email, role } });
  if (res.status !== 201) throw new Error(`invite answered ${res.status} ${res.text}`);
  const mail = await world.mailTo(email, before + 1);
  return { invitation: res.body, token: linkToken(mail.text, 'invite'), mail };
}

test('create a team: admin, managed domain, a first key on request; Me, switch, rename; the key reaches the API', async (t) => {
  const ann = await person('ann');
  const created = await ann.c.request('POST', '/teams', { body: { name: 'Ann & Co', api_key: true } });
  t.is(created.status, 201, created.text);
  t.like(created.body, { object: 'team', name: 'Ann & Co', risk_state: 'normal' });
  t.regex(created.body.api_key.token, /^rk_/);
  const team = { id: created.body.id, key: created.body.api_key.token };
  t.truthy(await managedDomain(world.w.p, team), 'the managed domain was made');
  const me = await ann.c.request('GET', '/me');
  t.is(me.body.teams.length, 1);
  t.is(me.body.current_team_id, null, 'not switched yet (the session started before the team existed)');
  const beforeSwitch = ann.c.cookieHeader();
  const switched = await ann.c.request('POST', `/teams/${team.id}/switch`, { body: {} });
  t.is(switched.status, 200, switched.text);
  t.is(switched.body.current_team_id, team.id);
  // A switch changes what the session reaches: its token is replaced, and the old cookie is nobody's.
  const stale = await world.w.p.request('GET', '/me', { headers: { cookie: beforeSwitch } });
  t.is(stale.status, 401, 'the token before the switch stopped working');
  t.not(ann.c.cookieHeader(), beforeSwitch);
  t.is((await ann.c.request('GET', '/auth/session')).body.current_team.id, team.id);
  const members = await ann.c.request('GET', `/teams/${team.id}/members`);
  t.is(members.body.data.length, 1);
  t.like(members.body.data[0], { object: 'team_member', email: ann.email, role: 'admin', mfa_enabled: false });
  const renamed = await ann.c.request('PATCH', `/teams/${team.id}`, { body: { name: 'Ann and Co' } });
  t.is(renamed.body.name, 'Ann and Co');
  t.is((await ann.c.request('PATCH', `/teams/${team.id}`, { body: { name: '' } })).status, 422);
  // GET /team, by the team's key and by the session alike: members, sender identity, the placeholders.
  for (const got of [await world.w.p.request('GET', '/team', { key: team.key }), await ann.c.request('GET', '/team')]) {
    t.is(got.status, 200, got.text);
    t.like(got.body, {
      id: team.id,
      risk_state: 'normal',
      plan: { code: 'free', name: 'Free' },
      ai_assist: { enabled: false },
      sso: { enabled: false, provider: null, enforced: false },
    });
    t.deepEqual(
      got.body.members.map((m: { email: string; role: string }) => [m.email, m.role]),
      [[ann.email, 'admin']],
    );
    t.deepEqual(got.body.sender_identity.verified_identities, [ann.email]);
    t.regex(got.body.sender_identity.managed_domain, /\.postwerk\.localhost$/);
  }
  // A new session starts in the team switched to last.
  const later = await signedIn(world, ann.email);
  t.is((await later.request('GET', '/me')).body.current_team_id, team.id);
  // Someone else's team does not exist for this user.
  const other = await person('olga');
  t.is((await other.c.request('POST', `/teams/${team.id}/switch`, { body: {} })).status, 404);
  t.is((await other.c.request('GET', `/teams/${team.id}/members`)).status, 404);
});

test('invitations: mailed, accepted only by the invited address, once; roles enforced; the last admin stays', async (t) => {
  const admin = await person('adele');
  const teamId = (await admin.c.request('POST', '/teams', { body: { name: 'Invites' } })).body.id;
  const bob = await person('bob');
  const carl = await person('carl');
  const { invitation, token, mail } = await invite(admin.c, teamId, bob.email, 'member');
  t.like(invitation, { object: 'team_invitation', email: bob.email, role: 'member', invited_by: admin.email });
  t.regex(mail.subject, /invited to Invites/);
  const listed = await admin.c.request('GET', `/teams/${teamId}/invitations`);
  t.deepEqual(
    listed.body.data.map((i: { id: string }) => i.id),
    [invitation.id],
  );
  const stolen = await carl.c.request('POST', '/team-invitations/accept', { body: { token } });
  t.is(stolen.status, 403, 'another account cannot accept it');
  t.is((await carl.c.request('GET', '/me')).body.teams.length, 0);
  const accepted = await bob.c.request('POST', '/team-invitations/accept', { body: { token } });
  t.is(accepted.status, 200, accepted.text);
  t.like(accepted.body, { object: 'team_member', email: bob.email, role: 'member' });
  const again = await bob.c.request('POST', '/team-invitations/accept', { body: { token } });
  t.is(again.status, 422, 'an invitation works once');
  t.is((await admin.c.request('GET', `/teams/${teamId}/invitations`)).body.data.length, 0);

  // Escalation: a member cannot invite, change roles (their own either) or remove others.
  const bobId = accepted.body.id;
  const escalate = await bob.c.request('PATCH', `/teams/${teamId}/members/${bobId}`, { body: { role: 'admin' } });
  t.is(escalate.status, 403);
  t.is(
    (await bob.c.request('POST', `/teams/${teamId}/invitations`, { body: { email: carl.email, role: 'admin' } }))
      .status,
    403,
  );
  const adminMember = (await bob.c.request('GET', `/teams/${teamId}/members`)).body.data.find(
    (m: { email: string }) => m.email === admin.email,
  );
  t.is((await bob.c.request('DELETE', `/teams/${teamId}/members/${adminMember.id}`)).status, 403);
  t.is((await bob.c.request('PATCH', `/teams/${teamId}`, { body: { name: 'Taken over' } })).status, 403);
  const roles = (await admin.c.request('GET', `/teams/${teamId}/members`)).body.data.map(
    (m: { role: string }) => m.role,
  );
  t.deepEqual(roles.sort(), ['admin', 'member'], 'nothing changed');

  // The last admin can neither step down nor leave; once bob is admin, they can.
  const demote = await admin.c.request('PATCH', `/teams/${teamId}/members/${adminMember.id}`, {
    body: { role: 'viewer' },
  });
  t.is(demote.status, 422);
  t.is((await admin.c.request('POST', `/teams/${teamId}/leave`, { body: {} })).status, 422);
  t.is((await admin.c.request('PATCH', `/teams/${teamId}/members/${bobId}`, { body: { role: 'admin' } })).status, 200);
  t.is((await admin.c.request('POST', `/teams/${teamId}/leave`, { body: {} })).status, 200);
  t.is((await admin.c.request('GET', `/teams/${teamId}/members`)).status, 404, 'gone from the team');

  // Revoked and expired invitations are refused.
  const revoked = await invite(bob.c, teamId, carl.email, 'viewer');
  t.is((await bob.c.request('DELETE', `/teams/${teamId}/invitations/${revoked.invitation.id}`)).status, 200);
  t.is((await carl.c.request('POST', '/team-invitations/accept', { body: { token: revoked.token } })).status, 422);
  const expired = await invite(bob.c, teamId, carl.email, 'viewer');
  await world.w.p
    .db('team_invitations')
    .where({ id: expired.invitation.id })
    .update({ expires_at: new Date(Date.now() - 1000) });
  t.is((await carl.c.request('POST', '/team-invitations/accept', { body: { token: expired.token } })).status, 422);
  const long = await carl.c.request('POST', '/team-invitations/accept', { body: { token: 'x'.repeat(257) } });
  t.is(long.status, 422, 'a token over 256 characters');
});

test("members' verified addresses are the team's sandbox identities while they are members", async (t) => {
  const admin = await person('dora');
  const created = await admin.c.request('POST', '/teams', { body: { name: 'Sandbox', api_key: true } });
  const team = { id: created.body.id, key: created.body.api_key.token };
  const eve = await person('eve');
  const { token } = await invite(admin.c, team.id, eve.email, 'viewer');
  const send = (to: string) =>
    world.w.p.request('POST', '/emails', {
      key: team.key,
      body: { from: `hi@${managed}`, to, subject: 'Hello', text: 'Hello' },
    });
  const managed = (await managedDomain(world.w.p, team)).name;
  t.is((await send(eve.email)).status, 403, 'not a member yet');
  t.is((await eve.c.request('POST', '/team-invitations/accept', { body: { token } })).status, 200);
  const before = world.w.sink.deliveredTo(eve.email).length;
  const sent = await send(eve.email);
  t.is(sent.status, 200, sent.text);
  t.is((await send(admin.email)).status, 200, "the admin's address too");
  await world.mailTo(eve.email, before + 1);
  const eveMember = (await admin.c.request('GET', `/teams/${team.id}/members`)).body.data.find(
    (m: { email: string }) => m.email === eve.email,
  );
  await admin.c.request('DELETE', `/teams/${team.id}/members/${eveMember.id}`);
  t.is((await send(eve.email)).status, 403, 'no longer once removed');
});
