// Sign-up, e-mail verification, sign-in, sign-out and password reset through the api, with the account mails sent
// by the platform team from PLATFORM_FROM, delivered by the real mta to the loopback sink and read from there.
import test from 'ava';
import { createHash } from 'node:crypto';
import { generate } from 'otplib';
import {
  CookieClient,
  linkToken,
  PEOPLE,
  signedIn,
  signUpAndVerify,
  startAccountsWorld,
  type AccountsWorld,
} from './helpers/accounts.ts';

let world: AccountsWorld;
test.before(async () => {
  world = await startAccountsWorld();
});
test.after.always(async () => {
  await world?.close();
});

const client = () => new CookieClient(world.w.p.url);
const PASSWORD = 'correct horse battery';

test('sign up, verify by the mailed link, sign in, read the session, sign out: the cookie stops working', async (t) => {
  const email = `ann@${PEOPLE}`;
  const c = client();
  const signup = await c.request('POST', '/auth/signup', {
    body: { email: ' Ann@People.TEST ', password: PASSWORD, name: 'Ann' },
  });
  t.is(signup.status, 200, signup.text);
  t.deepEqual(signup.body, { object: 'signup', requested: true });
  // No account before the link is used: signing in fails as for any unknown address.
  t.is((await c.request('POST', '/auth/login', { body: { email, password: PASSWORD } })).status, 401);
  const mail = await world.mailTo(email);
  t.is(mail.subject, 'Confirm your email address');
  const message = world.w.sink.deliveredTo(email)[0];
  t.regex(message.raw.toString(), /^From: Postwerk <accounts@platform-mail\.test>/m);
  const token = linkToken(mail.text, 'verify');
  const verified = await c.request('POST', '/auth/verify-email', { body: { token } });
  t.is(verified.status, 200, verified.text);
  t.is(verified.body.object, 'user');
  t.truthy(verified.body.email_verified_at);
  const again = await c.request('POST', '/auth/verify-email', { body: { token } });
  t.is(again.status, 422, 'a used link is refused');
  t.is(again.body.errors[0].path, 'token');

  const login = await c.request('POST', '/auth/login', { body: { email: 'ANN@people.test', password: PASSWORD } });
  t.is(login.status, 200, login.text);
  t.is(login.body.object, 'session');
  t.is(login.body.user.email, email);
  t.is(login.body.user.name, 'Ann');
  t.is(login.body.current_team, null);
  const setCookie = login.headers.getSetCookie().join('\n');
  t.regex(setCookie, /postwerk_session=pws_[A-Za-z0-9]+; Path=\/; Max-Age=\d+; SameSite=Lax; HttpOnly/);
  t.regex(setCookie, /postwerk_csrf=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; SameSite=Lax(?!; HttpOnly)/);
  t.notRegex(setCookie, /Secure/, 'plain http: no Secure flag');
  const stored = await world.w.p.db('sessions').where({ user_id: verified.body.id }).first();
  t.not(stored.token_hash, c.jar.get('postwerk_session'), 'the token is stored hashed');
  t.is(stored.token_hash.length, 64);

  const me = await c.request('GET', '/me');
  t.is(me.status, 200, me.text);
  t.is(me.body.email, email);
  t.deepEqual(me.body.teams, []);
  const stolen = c.cookieHeader();
  const out = await c.request('POST', '/auth/logout', { body: {} });
  t.is(out.status, 200, out.text);
  t.deepEqual(out.body, { object: 'session', revoked: true });
  const replay = await world.w.p.request('GET', '/me', { headers: { cookie: stolen } });
  t.is(replay.status, 401, 'the cookie of a session that was signed out is refused');
  t.is(replay.body.name, 'missing_api_key');
});

test('a sign-up for an address that has an account answers the same and mails its owner a notice instead', async (t) => {
  const email = `bea@${PEOPLE}`;
  await signUpAndVerify(world, email);
  const before = world.w.sink.deliveredTo(email).length;
  const c = client();
  const known = await c.request('POST', '/auth/signup', { body: { email, password: 'another password' } });
  const unknown = await c.request('POST', '/auth/signup', { body: { email: `nobody@${PEOPLE}`, password: PASSWORD } });
  t.is(known.status, unknown.status);
  t.is(known.text, unknown.text);
  const notice = await world.mailTo(email, before + 1);
  t.is(notice.subject, 'You already have an account');
  t.notRegex(notice.text, /#verify=/);
  // The old password still signs in; the sign-up's password does not.
  t.is((await c.request('POST', '/auth/login', { body: { email, password: 'another password' } })).status, 401);
  t.is((await c.request('POST', '/auth/login', { body: { email, password: PASSWORD } })).status, 200);
});

test('password reset: the same answer for any address, a link that works once, every session ended', async (t) => {
  const email = `cid@${PEOPLE}`;
  await signUpAndVerify(world, email);
  const session = await signedIn(world, email);
  const before = world.w.sink.deliveredTo(email).length;
  const c = client();
  const known = await c.request('POST', '/auth/password-reset', { body: { email } });
  const unknown = await c.request('POST', '/auth/password-reset', { body: { email: `ghost@${PEOPLE}` } });
  t.is(known.status, 200);
  t.is(known.text, unknown.text);
  t.deepEqual(known.body, { object: 'password_reset', requested: true });
  const mail = await world.mailTo(email, before + 1);
  t.is(mail.subject, 'Reset your password');
  const token = linkToken(mail.text, 'reset');
  const short = await c.request('POST', '/auth/password-reset/confirm', { body: { token, password: '1234567' } });
  t.is(short.status, 422, 'a 7-character password is refused and the link stays usable');
  t.is(short.body.errors[0].path, 'password');
  const done = await c.request('POST', '/auth/password-reset/confirm', {
    body: { token, password: 'a brand new password' },
  });
  t.is(done.status, 200, done.text);
  t.is(done.body.object, 'user');
  const replay = await c.request('POST', '/auth/password-reset/confirm', { body: { token, password: 'third one!' } });
  t.is(replay.status, 422, 'a used reset link is refused');
  t.is((await session.request('GET', '/me')).status, 401, 'the sessions of the account ended');
  t.is((await c.request('POST', '/auth/login', { body: { email, password: PASSWORD } })).status, 401);
  t.is((await c.request('POST', '/auth/login', { body: { email, password: 'a brand new password' } })).status, 200);
});

test('bad input: passwords of 7 and 4,097 characters, a bad address, unknown or expired tokens: 422, nothing made', async (t) => {
  const c = client();
  const count = async () =>
    Number(
      (
        await world.w.p
          .db('account_tokens')
          .where({ email: `dan@${PEOPLE}` })
          .count({ n: '*' })
      )[0].n,
    );
  const before = await count();
  for (const [body, path] of [
    [{ email: `dan@${PEOPLE}`, password: '1234567' }, 'password'],
    [{ email: `dan@${PEOPLE}`, password: 'x'.repeat(4097) }, 'password'],
    [{ email: 'not an address', password: PASSWORD }, 'email'],
    [{ email: `dan@${PEOPLE}`, password: PASSWORD, name: 'n'.repeat(201) }, 'name'],
  ] as const) {
    const res = await c.request('POST', '/auth/signup', { body });
    t.is(res.status, 422, JSON.stringify(body).slice(0, 80));
    t.is(res.body.errors?.[0]?.path, path);
  }
  t.is(await count(), before, 'no sign-up was stored');
  const exact = await c.request('POST', '/auth/signup', {
    body: { email: `dan@${PEOPLE}`, password: 'x'.repeat(4096) },
  });
  t.is(exact.status, 200, '4,096 characters is allowed');
  const unknown = await c.request('POST', '/auth/verify-email', { body: { token: 'nope' } });
  t.is(unknown.status, 422);
  // An expired sign-up link: the row is there, its time is past.
  const email = `eve@${PEOPLE}`;
  const prior = world.w.sink.deliveredTo(email).length;
  await c.request('POST', '/auth/signup', { body: { email, password: PASSWORD } });
  const token = linkToken((await world.mailTo(email, prior + 1)).text, 'verify');
  await world.w.p
    .db('account_tokens')
    .where({ email })
    .update({ expires_at: new Date(Date.now() - 1000) });
  const expired = await c.request('POST', '/auth/verify-email', { body: { token } });
  t.is(expired.status, 422);
  t.falsy(await world.w.p.db('users').where({ email }).first(), 'no account was made');
});

test('unicode: an address and a password typed in another normal form are the same account and password', async (t) => {
  const email = `fay@${PEOPLE}`;
  // "ﬁ" (U+FB01) is "fi" under NFKC; full-width Ｐ is P.
  await signUpAndVerify(world, email, 'ﬁne Ｐassword');
  const c = client();
  const res = await c.request('POST', '/auth/login', {
    body: { email: `ＦＡＹ@${PEOPLE}`, password: 'fine Password' },
  });
  t.is(res.status, 200, res.text);
  t.is(res.body.user.email, email);
});

test('a wrong password for a known address and any password for an unknown one get the same 401, byte for byte', async (t) => {
  const email = `gil@${PEOPLE}`;
  await signUpAndVerify(world, email);
  const c = client();
  const known = await c.request('POST', '/auth/login', { body: { email, password: 'not the password' } });
  const unknown = await c.request('POST', '/auth/login', {
    body: { email: `nobody-here@${PEOPLE}`, password: 'not the password' },
  });
  t.is(known.status, 401, known.text);
  t.is(unknown.status, 401, unknown.text);
  t.is(known.text, unknown.text, 'the same body');
  for (const header of ['content-type', 'content-length', 'set-cookie', 'retry-after', 'www-authenticate'])
    t.is(known.headers.get(header), unknown.headers.get(header), header);
  t.is(c.jar.size, 0, 'no cookie either way');
});

/** The rows of `table` as text, to look for a secret in any column. */
const rowsText = async (table: string) => JSON.stringify(await world.w.p.db(table).select('*'));
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

test('secrets at rest: mailed verification, reset and invitation tokens, challenges and recovery codes only as hashes', async (t) => {
  const email = `hal@${PEOPLE}`;
  const c = client();
  let before = world.w.sink.deliveredTo(email).length;
  await c.request('POST', '/auth/signup', { body: { email, password: PASSWORD, name: 'Hal' } });
  const verify = linkToken((await world.mailTo(email, before + 1)).text, 'verify');
  const signupRow = await world.w.p
    .db('account_tokens')
    .where({ token_hash: sha256(verify) })
    .first();
  t.like(signupRow, { kind: 'signup', email }, 'the row is found by the hash of the mailed token');
  t.false((await rowsText('account_tokens')).includes(verify), 'no row holds the verification token');
  t.false(JSON.stringify(signupRow).includes(PASSWORD), 'nor the password (its Argon2id hash is kept)');
  t.is((await c.request('POST', '/auth/verify-email', { body: { token: verify } })).status, 200);

  before = world.w.sink.deliveredTo(email).length;
  await c.request('POST', '/auth/password-reset', { body: { email } });
  const reset = linkToken((await world.mailTo(email, before + 1)).text, 'reset');
  t.like(
    await world.w.p
      .db('account_tokens')
      .where({ token_hash: sha256(reset) })
      .first(),
    {
      kind: 'password_reset',
    },
  );
  t.false((await rowsText('account_tokens')).includes(reset), 'no row holds the reset token');

  const session = await signedIn(world, email);
  const teamId = (await session.request('POST', '/teams', { body: { name: 'Hashes' } })).body.id;
  const invitee = `ida@${PEOPLE}`;
  before = world.w.sink.deliveredTo(invitee).length;
  const invited = await session.request('POST', `/teams/${teamId}/invitations`, {
    body: { email: invitee, role: 'viewer' },
  });
  t.is(invited.status, 201, invited.text);
  const invitation = linkToken((await world.mailTo(invitee, before + 1)).text, 'invite');
  t.false((await rowsText('team_invitations')).includes(invitation), 'no row holds the invitation token');
  t.false(JSON.stringify(invited.body).includes(invitation), 'nor does the answer to the admin');

  const enrolment = await session.request('POST', '/auth/mfa/enrol', { body: {} });
  const on = await session.request('POST', '/auth/mfa/confirm', {
    body: { code: await generate({ secret: enrolment.body.secret }), password: PASSWORD },
  });
  t.is(on.status, 200, on.text);
  const recovery: string[] = on.body.recovery_codes;
  const user = await world.w.p.db('users').where({ email }).first('id');
  const stored = await world.w.p.db('mfa_recovery_codes').where({ user_id: user.id }).pluck('code_hash');
  t.deepEqual(stored.sort(), recovery.map(sha256).sort(), 'each code is kept as its SHA-256');
  const codesText = await rowsText('mfa_recovery_codes');
  for (const code of recovery) t.false(codesText.includes(code), 'no row holds a recovery code');
  const challenge = await client().request('POST', '/auth/login', { body: { email, password: PASSWORD } });
  t.is(challenge.body.object, 'mfa_challenge');
  t.false((await rowsText('mfa_challenges')).includes(challenge.body.challenge_token), 'nor a challenge token');
  t.truthy(
    await world.w.p
      .db('mfa_challenges')
      .where({ token_hash: sha256(challenge.body.challenge_token) })
      .first(),
  );
});
