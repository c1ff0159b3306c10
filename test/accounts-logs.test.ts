// Passwords are never logged: every route that takes one (sign-up, sign-in, the MFA changes, the reset) is called
// with passwords no other text contains, and none of them appears in what the in-process api's logger wrote (at
// `trace`, its every line) nor in any request-log row (the auth routes write none; the session's API calls do).
import test from 'ava';
import { generate } from 'otplib';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { CookieClient, makeUser, signIn } from './helpers/accounts.ts';
import { requestReset } from '../shared/accounts/reset.ts';
import { until } from './helpers/wait.ts';

const lines: string[] = [];
let p: Platform;
test.before(async () => {
  p = await startPlatform({ LOG_LEVEL: 'trace' }, { logTo: { write: (line: string) => void lines.push(line) } });
});
test.after.always(async () => {
  await p?.close();
});

// Distinct texts, so that a hit can only be the password itself.
const PASSWORD = 'Pw-of-the-account-7Qx2vK';
const WRONG = 'Pw-never-right-9Lm4sD';
const NEW_PASSWORD = 'Pw-after-the-reset-3Hj8rT';
const SIGNUP = 'Pw-of-a-sign-up-5Nc1wB';
const TOO_LONG = 'Pw-too-long-8Fz6yE'.repeat(300);

test('no password reaches the log output or the request-log rows', async (t) => {
  const email = `logged-${Date.now()}@people.test`;
  await makeUser(p.db, email, PASSWORD);
  const anon = new CookieClient(p.url);
  const signup = await anon.request('POST', '/auth/signup', {
    body: { email: `newcomer-${Date.now()}@people.test`, password: SIGNUP },
  });
  t.is(signup.status, 200, signup.text);
  const long = await anon.request('POST', '/auth/signup', { body: { email, password: TOO_LONG } });
  t.is(long.status, 422, long.text);
  t.is((await anon.request('POST', '/auth/login', { body: { email, password: WRONG } })).status, 401);
  const unknown = { email: `nobody-${Date.now()}@people.test`, password: WRONG };
  t.is((await anon.request('POST', '/auth/login', { body: unknown })).status, 401);

  const c = await signIn(p.url, email, PASSWORD);
  const enrolment = await c.request('POST', '/auth/mfa/enrol', { body: {} });
  const secret: string = enrolment.body.secret;
  const code = (offset: number) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + offset * 30 });
  const wrongConfirm = await c.request('POST', '/auth/mfa/confirm', { body: { code: await code(0), password: WRONG } });
  t.is(wrongConfirm.status, 422, wrongConfirm.text);
  const on = await c.request('POST', '/auth/mfa/confirm', { body: { code: await code(0), password: PASSWORD } });
  t.is(on.status, 200, on.text);
  t.is((await c.request('POST', '/auth/mfa/disable', { body: { password: WRONG } })).status, 422);
  t.is((await c.request('POST', '/auth/mfa/disable', { body: { password: PASSWORD } })).status, 200);

  // API routes with the session: their calls are request-log rows of the team, bodies included.
  const teamId = (await c.request('POST', '/teams', { body: { name: 'Logged' } })).body.id;
  t.is((await c.request('POST', `/teams/${teamId}/switch`, { body: {} })).status, 200);
  t.is((await c.request('POST', '/suppressions', { body: { email: 'quiet@example.com' } })).status, 201);
  await until(async () => (await p.db('request_logs').where({ team_id: teamId }).first()) !== undefined, {
    timeoutMs: 10_000,
    what: "the session's request-log row",
  });

  const { token } = await requestReset(p.db, email);
  const reset = await anon.request('POST', '/auth/password-reset/confirm', {
    body: { token, password: NEW_PASSWORD },
  });
  t.is(reset.status, 200, reset.text);
  t.is((await signIn(p.url, email, NEW_PASSWORD)).jar.size, 2, 'the new password signs in');

  // The capture works: the api logged the requests of the auth routes it answered.
  const logged = lines.map((l) => JSON.parse(l) as { msg: string; route?: string });
  for (const route of ['/auth/signup', '/auth/login', '/auth/mfa/confirm', '/auth/password-reset/confirm'])
    t.true(
      logged.some((l) => l.msg === 'request' && l.route === route),
      `a request line for ${route}`,
    );
  const output = lines.join('');
  // Every row of the platform's request log, not only the team's: the auth routes must have written none.
  const stored = JSON.stringify(await p.db('request_logs').select('*'));
  for (const [name, secretText] of Object.entries({ PASSWORD, WRONG, NEW_PASSWORD, SIGNUP, TOO_LONG })) {
    t.false(output.includes(secretText.slice(0, 24)), `${name} is in the log output`);
    t.false(stored.includes(secretText.slice(0, 24)), `${name} is in a request-log row`);
  }
});
