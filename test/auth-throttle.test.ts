// Brute force: failed sign-ins and MFA codes per account, every attempt per client address, sign-up and reset
// requests per address, counted in Redis; 429 with retry-after past a limit, and the account's owner (only they)
// told by mail when their account is locked. Each test is its own client (TRUST_PROXY: X-Forwarded-For).
import test, { type ExecutionContext } from 'ava';
import { generate } from 'otplib';
import { CookieClient, PEOPLE, signUpAndVerify, startAccountsWorld, type AccountsWorld } from './helpers/accounts.ts';
import { WINDOW_SECONDS } from '../shared/accounts/throttle.ts';

let world: AccountsWorld;
test.before(async () => {
  world = await startAccountsWorld({ AUTH_ACCOUNT_FAILURES: '3', AUTH_CLIENT_ATTEMPTS: '15', TRUST_PROXY: 'true' });
});
test.after.always(async () => {
  await world?.close();
});

const PASSWORD = 'correct horse battery';
const from = (ip: string) => ({ 'x-forwarded-for': ip });
const HOUR = 3600;

/**
 * The throttles count in clock-aligned windows (15 minutes; an hour for mails): a test whose counting crossed a
 * window's end would start counting anew halfway (a CI run once did, 12 s into a window). With less than `need`
 * seconds left of the window, the test waits for the next one.
 */
async function roomInWindow(t: ExecutionContext, windowSeconds: number, need = 45) {
  const left = windowSeconds - ((Date.now() / 1000) % windowSeconds);
  if (left >= need) return;
  t.timeout(120_000);
  await new Promise((resolve) => setTimeout(resolve, left * 1000 + 100));
}

test('three failed sign-ins lock the account: 429 with retry-after even for the right password; the owner is mailed', async (t) => {
  await roomInWindow(t, WINDOW_SECONDS);
  const email = `locked@${PEOPLE}`;
  await signUpAndVerify(world, email);
  const before = world.w.sink.deliveredTo(email).length;
  const c = new CookieClient(world.w.p.url);
  for (let i = 0; i < 3; i++) {
    const res = await c.request('POST', '/auth/login', {
      body: { email, password: 'wrong guess' },
      headers: from('198.51.100.1'),
    });
    t.is(res.status, 401, res.text);
  }
  // From another address too: the lock is the account's.
  const locked = await c.request('POST', '/auth/login', {
    body: { email, password: PASSWORD },
    headers: from('198.51.100.2'),
  });
  t.is(locked.status, 429, locked.text);
  t.is(locked.body.name, 'rate_limit_exceeded');
  const retry = Number(locked.headers.get('retry-after'));
  t.true(retry > 0 && retry <= 900, `retry-after ${retry}`);
  const notice = await world.mailTo(email, before + 1);
  t.is(notice.subject, 'Sign-in to your account is paused');
  // An address without an account is locked alike (the same answers), and nobody is mailed.
  const ghost = `ghost@${PEOPLE}`;
  const answers = [];
  for (let i = 0; i < 4; i++)
    answers.push(
      (await c.request('POST', '/auth/login', { body: { email: ghost, password: 'x' }, headers: from('198.51.100.3') }))
        .status,
    );
  t.deepEqual(answers, [401, 401, 401, 429]);
  t.is(world.w.sink.deliveredTo(ghost).length, 0);
});

test('one client address: 15 attempts in the window, then 429 for anything it tries', async (t) => {
  await roomInWindow(t, WINDOW_SECONDS);
  const c = new CookieClient(world.w.p.url);
  const statuses: number[] = [];
  for (let i = 0; i < 16; i++) {
    const res = await c.request('POST', '/auth/login', {
      body: { email: `spray${i}@${PEOPLE}`, password: 'guess' },
      headers: from('203.0.113.7'),
    });
    statuses.push(res.status);
  }
  t.deepEqual(statuses, [...Array(15).fill(401), 429]);
  const reset = await c.request('POST', '/auth/password-reset', {
    body: { email: `x@${PEOPLE}` },
    headers: from('203.0.113.7'),
  });
  t.is(reset.status, 429);
  t.truthy(reset.headers.get('retry-after'));
  const elsewhere = await c.request('POST', '/auth/login', {
    body: { email: `x@${PEOPLE}`, password: 'guess' },
    headers: from('203.0.113.8'),
  });
  t.is(elsewhere.status, 401, 'another address is not held back');
});

test('reset and sign-up requests: five an hour per address, then 429, for any address alike', async (t) => {
  await roomInWindow(t, HOUR);
  const c = new CookieClient(world.w.p.url);
  for (const email of [`known-reset@${PEOPLE}`, `unknown-reset@${PEOPLE}`]) {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push(
        (await c.request('POST', '/auth/password-reset', { body: { email }, headers: from(`192.0.2.${i + 10}`) }))
          .status,
      );
    t.deepEqual(statuses, [200, 200, 200, 200, 200, 429], email);
  }
});

test('wrong MFA codes lock the second step of the account: 429, and the owner is mailed', async (t) => {
  await roomInWindow(t, WINDOW_SECONDS);
  const email = `mfa-locked@${PEOPLE}`;
  await signUpAndVerify(world, email);
  const c = new CookieClient(world.w.p.url);
  const ip = from('198.51.100.40');
  await c.request('POST', '/auth/login', { body: { email, password: PASSWORD }, headers: ip });
  const enrol = await c.request('POST', '/auth/mfa/enrol', { body: {}, headers: ip });
  const code = await generate({ secret: enrol.body.secret });
  t.is((await c.request('POST', '/auth/mfa/confirm', { body: { code, password: PASSWORD }, headers: ip })).status, 200);
  const before = world.w.sink.deliveredTo(email).length;
  const login = await new CookieClient(world.w.p.url).request('POST', '/auth/login', {
    body: { email, password: PASSWORD },
    headers: ip,
  });
  const challenge_token = login.body.challenge_token;
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++)
    statuses.push(
      (await c.request('POST', '/auth/login/mfa', { body: { challenge_token, code: '000000' }, headers: ip })).status,
    );
  t.deepEqual(statuses, [422, 422, 422, 429]);
  const notice = await world.mailTo(email, before + 1);
  t.is(notice.subject, 'Sign-in to your account is paused');
  t.regex(notice.text, /two-factor codes/);
});
