// MFA: TOTP enrolment and confirmation, the sign-in challenge completed with a code or a recovery code, each code
// and recovery code working once, new recovery codes, turning it off; the session's token replaced at each change.
import test from 'ava';
import { generate } from 'otplib';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { CookieClient, makeUser, signIn } from './helpers/accounts.ts';

let p: Platform;
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  await p?.close();
});

const PASSWORD = 'correct horse battery';
/** The code of the step `offset` steps from now (the window takes the previous, current and next one). */
const code = (secret: string, offset = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + offset * 30 });

let n = 0;
async function withMfa() {
  const email = `mfa${++n}-${Date.now()}@people.test`;
  await makeUser(p.db, email);
  const c = await signIn(p.url, email);
  const enrolment = await c.request('POST', '/auth/mfa/enrol', { body: {} });
  const activated = await c.request('POST', '/auth/mfa/confirm', {
    body: { code: await code(enrolment.body.secret), password: PASSWORD },
  });
  if (activated.status !== 200) throw new Error(`confirm answered ${activated.status} ${activated.text}`);
  return { email, c, secret: enrolment.body.secret as string, recovery: activated.body.recovery_codes as string[] };
}

async function challenge(email: string) {
  const c = new CookieClient(p.url);
  const res = await c.request('POST', '/auth/login', { body: { email, password: PASSWORD } });
  return { c, res };
}

test('enrol, confirm with a code and the password: MFA on, ten recovery codes, the session token replaced', async (t) => {
  const email = `ann-${Date.now()}@people.test`;
  await makeUser(p.db, email);
  const c = await signIn(p.url, email);
  t.like((await c.request('GET', '/auth/mfa')).body, { object: 'mfa', enabled: false, enrolling: false });
  const enrolment = await c.request('POST', '/auth/mfa/enrol', { body: {} });
  t.is(enrolment.status, 200, enrolment.text);
  t.is(enrolment.body.object, 'mfa_enrolment');
  t.regex(enrolment.body.otpauth_url, /^otpauth:\/\/totp\/Postwerk:.+\?.*secret=[A-Z2-7]+/);
  const secret = enrolment.body.secret;
  t.like((await c.request('GET', '/auth/mfa')).body, { enabled: false, enrolling: true, has_password: true });
  const stored = await p.db('users').where({ email }).first();
  t.false(String(stored.mfa_pending_secret_sealed).includes(secret), 'the secret is sealed at rest');
  const noPassword = await c.request('POST', '/auth/mfa/confirm', { body: { code: await code(secret) } });
  t.is(noPassword.status, 422);
  const wrongCode = await c.request('POST', '/auth/mfa/confirm', { body: { code: '000000', password: PASSWORD } });
  t.is(wrongCode.status, 422);
  t.is(wrongCode.body.errors[0].path, 'code');
  const wrongPassword = await c.request('POST', '/auth/mfa/confirm', {
    body: { code: await code(secret), password: 'not it at all' },
  });
  t.is(wrongPassword.status, 422);
  t.is(wrongPassword.body.errors[0].path, 'password');
  const before = c.cookieHeader();
  const activated = await c.request('POST', '/auth/mfa/confirm', {
    body: { code: await code(secret), password: PASSWORD },
  });
  t.is(activated.status, 200, activated.text);
  t.like(activated.body, { object: 'mfa', enabled: true });
  t.is(activated.body.recovery_codes.length, 10);
  t.is(new Set(activated.body.recovery_codes).size, 10);
  t.is((await p.request('GET', '/me', { headers: { cookie: before } })).status, 401, 'the old token stopped working');
  t.like((await c.request('GET', '/auth/mfa')).body, { enabled: true, enrolling: false, recovery_codes_remaining: 10 });
  const twice = await c.request('POST', '/auth/mfa/enrol', { body: {} });
  t.is(twice.status, 422, 'no second enrolment while MFA is on');
});

test('sign-in with MFA: a challenge, then a code (once); a wrong code or an unknown challenge is refused', async (t) => {
  const { email, secret } = await withMfa();
  const { c, res } = await challenge(email);
  t.is(res.status, 200);
  t.is(res.body.object, 'mfa_challenge');
  t.regex(res.body.challenge_token, /^pwc_/);
  t.is(c.jar.size, 0, 'no cookie before the second step');
  const wrong = await c.request('POST', '/auth/login/mfa', {
    body: { challenge_token: res.body.challenge_token, code: '123456' },
  });
  t.is(wrong.status, 422);
  const unknown = await c.request('POST', '/auth/login/mfa', { body: { challenge_token: 'pwc_nope', code: '123456' } });
  t.is(unknown.status, 422);
  t.is(unknown.body.errors[0].path, 'challenge_token');
  // The code of the next step: the confirmation used this step's, and a code works once.
  const next = await code(secret, 1);
  const ok = await c.request('POST', '/auth/login/mfa', {
    body: { challenge_token: res.body.challenge_token, code: next },
  });
  t.is(ok.status, 200, ok.text);
  t.is(ok.body.object, 'session');
  t.truthy(c.jar.get('postwerk_session'));
  const spent = await c.request('POST', '/auth/login/mfa', {
    body: { challenge_token: res.body.challenge_token, code: next },
  });
  t.is(spent.status, 422, 'a challenge is spent by its first right code');
  const again = await challenge(email);
  const replay = await again.c.request('POST', '/auth/login/mfa', {
    body: { challenge_token: again.res.body.challenge_token, code: next },
  });
  t.is(replay.status, 422, 'the same code is refused a second time');
});

test('recovery codes: each works once; new ones replace the old; MFA turned off with the password', async (t) => {
  const { email, c, secret, recovery } = await withMfa();
  const first = await challenge(email);
  const used = await first.c.request('POST', '/auth/login/recovery', {
    body: { challenge_token: first.res.body.challenge_token, recovery_code: recovery[0].toUpperCase() },
  });
  t.is(used.status, 200, used.text);
  const second = await challenge(email);
  const reused = await second.c.request('POST', '/auth/login/recovery', {
    body: { challenge_token: second.res.body.challenge_token, recovery_code: recovery[0] },
  });
  t.is(reused.status, 422, 'a recovery code works once');
  t.is(reused.body.errors[0].path, 'recovery_code');
  t.like((await c.request('GET', '/auth/mfa')).body, { recovery_codes_remaining: 9 });
  const fresh = await c.request('POST', '/auth/mfa/recovery-codes', { body: { code: await code(secret, 1) } });
  t.is(fresh.status, 200, fresh.text);
  t.is(fresh.body.recovery_codes.length, 10);
  const old = await second.c.request('POST', '/auth/login/recovery', {
    body: { challenge_token: second.res.body.challenge_token, recovery_code: recovery[1] },
  });
  t.is(old.status, 422, 'the old codes are gone');
  const wrong = await c.request('POST', '/auth/mfa/disable', { body: { password: 'wrong password!' } });
  t.is(wrong.status, 422);
  t.like((await c.request('GET', '/auth/mfa')).body, { enabled: true });
  const before = c.cookieHeader();
  const off = await c.request('POST', '/auth/mfa/disable', { body: { password: PASSWORD } });
  t.is(off.status, 200, off.text);
  t.deepEqual(off.body, { object: 'mfa', enabled: false, enabled_at: null });
  t.is((await p.request('GET', '/me', { headers: { cookie: before } })).status, 401, 'the old token stopped working');
  t.is((await c.request('GET', '/me')).status, 200, 'the new one works');
  const plain = await challenge(email);
  t.is(plain.res.body.object, 'session', 'a sign-in without MFA again');
});

test('MFA turned off with a code instead of the password: a wrong code changes nothing; the session token replaced', async (t) => {
  const { email, c, secret } = await withMfa();
  const user = await p.db('users').where({ email }).first('id');
  const neither = await c.request('POST', '/auth/mfa/disable', { body: {} });
  t.is(neither.status, 422, neither.text);
  const wrong = await c.request('POST', '/auth/mfa/disable', { body: { code: '000000' } });
  t.is(wrong.status, 422, wrong.text);
  t.is(wrong.body.errors[0].path, 'code');
  t.like((await c.request('GET', '/auth/mfa')).body, { enabled: true, recovery_codes_remaining: 10 });
  const before = c.cookieHeader();
  // The code of the next step: the confirmation spent this step's.
  const off = await c.request('POST', '/auth/mfa/disable', { body: { code: await code(secret, 1) } });
  t.is(off.status, 200, off.text);
  t.deepEqual(off.body, { object: 'mfa', enabled: false, enabled_at: null });
  t.is((await p.request('GET', '/me', { headers: { cookie: before } })).status, 401, 'the old token stopped working');
  t.is((await c.request('GET', '/me')).status, 200, 'the new one works');
  t.like((await c.request('GET', '/auth/mfa')).body, { enabled: false, recovery_codes_remaining: 0 });
  t.is(Number((await p.db('mfa_recovery_codes').where({ user_id: user.id }).count({ n: '*' }))[0].n), 0);
  const plain = await challenge(email);
  t.is(plain.res.body.object, 'session', 'a sign-in without MFA again');
});
