// Account mails commit with the account change they tell about (shared/accounts/mail.ts): the email row is written
// in the change's transaction, so when the api answers the mail is already committed (a crash after the answer
// loses at most the enqueue, which the mta's sweep recovers), and a change that rolls back leaves no mail behind
// (nor a mail that fails leaves a change without its mail). Real PostgreSQL, the real mta and a loopback sink.
import test from 'ava';
import {
  CookieClient,
  linkToken,
  makeUser,
  PEOPLE,
  startAccountsWorld,
  type AccountsWorld,
} from './helpers/accounts.ts';
import { accountMailer } from '../shared/accounts/mail.ts';
import { invitationMail, resetMail, signupMail } from '../shared/accounts/messages.ts';
import { signUp } from '../shared/accounts/signup.ts';
import { requestReset } from '../shared/accounts/reset.ts';
import { createInvitation } from '../shared/teams/invitations.ts';
import { createTeam } from '../shared/teams/teams.ts';

let world: AccountsWorld;
test.before(async () => {
  world = await startAccountsWorld();
});
test.after.always(async () => {
  await world?.close();
});

const mailsTo = (address: string) =>
  world.w.p.db('emails').whereRaw('? = any("to")', [address]).select('id', 'subject');
const tokensOf = (email: string) => world.w.p.db('account_tokens').where({ email }).select('id', 'kind');

test('the sign-up and reset mails are committed when the api answers, and delivered', async (t) => {
  const email = `commit@${PEOPLE}`;
  const c = new CookieClient(world.w.p.url);
  const signup = await c.request('POST', '/auth/signup', { body: { email, password: 'correct horse battery' } });
  t.is(signup.status, 200, signup.text);
  // Read at once, no waiting: the row was written in the sign-up's own transaction.
  const rows = await mailsTo(email);
  t.deepEqual(
    rows.map((r) => r.subject),
    ['Confirm your email address'],
  );
  const mail = await world.mailTo(email);
  const verified = await c.request('POST', '/auth/verify-email', { body: { token: linkToken(mail.text, 'verify') } });
  t.is(verified.status, 200, verified.text);

  const reset = await c.request('POST', '/auth/password-reset', { body: { email } });
  t.is(reset.status, 200, reset.text);
  t.deepEqual((await mailsTo(email)).map((r) => r.subject).sort(), [
    'Confirm your email address',
    'Reset your password',
  ]);
  t.is((await world.mailTo(email, 2)).subject, 'Reset your password');

  // An unknown address: the token row (as for any address), no mail.
  const unknown = `nobody-commit@${PEOPLE}`;
  t.is((await c.request('POST', '/auth/password-reset', { body: { email: unknown } })).status, 200);
  t.is((await tokensOf(unknown)).length, 1);
  t.deepEqual(await mailsTo(unknown), []);
});

test('a change that fails after its mail was written leaves neither the change nor the mail', async (t) => {
  const deps = world.w.p.deps;
  const mailer = accountMailer(deps);
  const base = deps.config.PUBLIC_BASE_URL;
  const crash = () => {
    throw new Error('crashed after the mail');
  };

  const signupAddress = `rollback-signup@${PEOPLE}`;
  const box = await mailer.outbox();
  await t.throwsAsync(
    signUp(deps.db, { email: signupAddress, password: 'correct horse battery' }, new Date(), async (trx, o) => {
      await box.write(trx, signupMail(base, o.email, o.token));
      t.is((await trx('emails').whereRaw('? = any("to")', [signupAddress])).length, 1, 'written in the transaction');
      crash();
    }),
    { message: 'crashed after the mail' },
  );
  t.deepEqual(await tokensOf(signupAddress), [], 'no pending sign-up');
  t.deepEqual(await mailsTo(signupAddress), [], 'no mail');

  const resetAddress = `rollback-reset@${PEOPLE}`;
  await makeUser(deps.db, resetAddress);
  await t.throwsAsync(
    requestReset(deps.db, resetAddress, new Date(), async (trx, o) => {
      await box.write(trx, resetMail(base, o.email, o.token));
      crash();
    }),
  );
  t.deepEqual(
    (await tokensOf(resetAddress)).filter((r) => r.kind === 'password_reset'),
    [],
  );
  t.deepEqual(await mailsTo(resetAddress), []);

  const admin = await makeUser(deps.db, `rollback-admin@${PEOPLE}`);
  const team = await createTeam(deps.db, { name: 'Rollback team' });
  const invited = `rollback-invited@${PEOPLE}`;
  await t.throwsAsync(
    createInvitation(deps.db, team.id, admin.id, { email: invited, role: 'member' }, new Date(), async (trx, made) => {
      await box.write(
        trx,
        invitationMail(base, invited, made.token, { team: 'x', inviter: null, role: 'member', days: 7 }),
      );
      crash();
    }),
  );
  t.deepEqual(await deps.db('team_invitations').where({ email: invited }), [], 'no invitation');
  t.deepEqual(await mailsTo(invited), []);
});

test('a mail that cannot be written rolls the change back', async (t) => {
  const deps = world.w.p.deps;
  const box = await accountMailer(deps).outbox();
  const email = `mail-fails@${PEOPLE}`;
  await t.throwsAsync(
    signUp(deps.db, { email, password: 'correct horse battery' }, new Date(), async (trx, o) => {
      // A statement of the change's transaction fails (as a full disk or a lost connection would): all is undone.
      await box.write(trx, signupMail(deps.config.PUBLIC_BASE_URL, o.email, o.token));
      await trx.raw('select 1/0');
    }),
  );
  t.deepEqual(await tokensOf(email), []);
  t.deepEqual(await mailsTo(email), []);
});
