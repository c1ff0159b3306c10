// The auth area (spec, Authentication 6): sign-up, e-mail verification, sign-in (with the MFA second step), sign-out
// and password reset. Sign-up, sign-in and reset need no credential (`none`); the rest need the session cookie. No
// answer tells whether an address has an account (docs/accounts.md).
import { z } from 'zod';
import type { Context } from 'koa';
import { ServiceError } from '../../shared/errors.ts';
import { signUp, verifyEmail } from '../../shared/accounts/signup.ts';
import { requestReset, resetPassword } from '../../shared/accounts/reset.ts';
import { login } from '../../shared/accounts/login.ts';
import { normalizeEmail } from '../../shared/accounts/addresses.ts';
import { countClient, countMail, WINDOW_SECONDS } from '../../shared/accounts/throttle.ts';
import { lockedMail, resetMail, signupExistingMail, signupMail } from '../../shared/accounts/messages.ts';
import { revokeAllSessions, revokeSession } from '../../shared/accounts/sessions.ts';
import { isoRequired } from '../../shared/time.ts';
import type { ApiDeps } from '../deps.ts';
import { defineOperation } from './operation.ts';
import { checkOrigin, clearSessionCookies } from '../middleware/session.ts';
import * as s from './auth-schemas.ts';
import { mailer, presentSession, startSession, throttleDeps, throttled } from './auth-common.ts';
import { mfaLoginOperations } from './auth-mfa-login.ts';

const tag = 'auth';
const open = { tag, permission: 'none', scope: null } as const;
const signedIn = { tag, permission: 'session', scope: null } as const;

/** Sign-up, sign-in and reset take no cookie, but a browser posting them for another site is refused. */
async function guard(ctx: Context, deps: ApiDeps): Promise<void> {
  checkOrigin(ctx, deps, false);
  const wait = await countClient(throttleDeps(deps), ctx.ip);
  if (wait !== null) throttled(ctx, wait);
}

const badLogin = () => new ServiceError('validation_error', 'Incorrect email address or password.', { status: 401 });

export const authOperations = [
  defineOperation({
    ...open,
    operationId: 'signUp',
    method: 'post',
    path: '/auth/signup',
    summary: 'Sign up',
    description:
      'Asks for an account: a link to confirm the address is mailed to it, and the account is made when the link is used (POST /auth/verify-email). The answer is the same whether or not the address already has an account (its owner is then mailed a notice instead). Throttled per client address and per address (5 requests an hour, then 429 with retry-after, for any address).',
    body: z.object({
      email: s.email.describe('The address, 3-320 characters (compared after NFKC and lower-casing)'),
      password: s.password.describe('8-4096 characters (NFKC-normalised before it is hashed with Argon2id)'),
      name: z.string().max(200).nullable().optional().describe('Your name, up to 200 characters'),
    }),
    response: z.object({ object: z.literal('signup'), requested: z.literal(true) }).meta({ id: 'SignupRequested' }),
    handler: async ({ body, deps, ctx }) => {
      await guard(ctx, deps);
      const wait = await countMail(throttleDeps(deps), normalizeEmail(body.email));
      if (wait !== null) throttled(ctx, wait);
      const base = deps.config.PUBLIC_BASE_URL;
      const outbox = await mailer(deps).outbox();
      await signUp(deps.db, body, new Date(), (trx, o) =>
        outbox.write(trx, o.existing ? signupExistingMail(base, o.email) : signupMail(base, o.email, o.token)),
      );
      await outbox.enqueue();
      return { object: 'signup' as const, requested: true as const };
    },
  }),
  defineOperation({
    ...open,
    operationId: 'verifyEmail',
    method: 'post',
    path: '/auth/verify-email',
    summary: 'Verify an e-mail address',
    description:
      "Uses the token of a sign-up's mail (once, within 24 hours): the account is made with its address verified. Sign in afterwards.",
    body: z.object({ token: s.token512.describe("The token of the mail's link") }),
    response: z
      .object({ object: z.literal('user'), id: z.uuid(), email_verified_at: z.iso.datetime().nullable() })
      .meta({ id: 'VerifyEmailResult' }),
    handler: async ({ body, deps, ctx }) => {
      await guard(ctx, deps);
      const user = await verifyEmail(deps.db, body.token);
      return { object: 'user' as const, id: user.id, email_verified_at: isoRequired(user.email_verified_at!) };
    },
  }),
  defineOperation({
    ...open,
    operationId: 'login',
    method: 'post',
    path: '/auth/login',
    summary: 'Sign in',
    description:
      'Checks the address and password. Answers the Session and sets the session cookie (`postwerk_session`, httpOnly) and the CSRF cookie (`postwerk_csrf`); with MFA on, answers an MfaChallenge instead, to be completed at POST /auth/login/mfa or /auth/login/recovery. A wrong address or password is 401; 10 failures of one account in 15 minutes lock it for the rest of the window (429, and its owner is mailed), and each client address has its own limit.',
    body: z.object({
      email: s.email.describe('The account address'),
      password: z.string().min(1).max(4096).describe('The password, 1-4096 characters'),
    }),
    response: z.union([s.session, s.mfaChallenge]),
    handler: async ({ body, deps, ctx }) => {
      checkOrigin(ctx, deps, false);
      const outcome = await login(deps.db, throttleDeps(deps), { ...body, ip: ctx.ip });
      if (outcome.kind === 'throttled') throttled(ctx, outcome.retryAfter);
      if (outcome.kind === 'failed') {
        if (outcome.lockedNow)
          mailer(deps).send(
            lockedMail(deps.config.PUBLIC_BASE_URL, outcome.lockedNow.email, WINDOW_SECONDS / 60, 'sign-ins'),
          );
        throw badLogin();
      }
      if (outcome.kind === 'mfa') return outcome.challenge;
      return startSession(ctx, deps, outcome.user);
    },
  }),
  ...mfaLoginOperations,
  defineOperation({
    ...signedIn,
    operationId: 'logout',
    method: 'post',
    path: '/auth/logout',
    summary: 'Sign out',
    description:
      'Ends this session (its cookie stops working at once), or with `all: true` every session of the account.',
    body: z.object({ all: z.boolean().optional().describe('End every session of the account, not only this one') }),
    response: z.object({ object: z.literal('session'), revoked: z.literal(true) }).meta({ id: 'LogoutResult' }),
    handler: async ({ body, session, deps, ctx }) => {
      if (body.all) await revokeAllSessions(deps.db, session.user.id);
      else await revokeSession(deps.db, session.user.id, session.session.id);
      clearSessionCookies(ctx, deps);
      return { object: 'session' as const, revoked: true as const };
    },
  }),
  defineOperation({
    ...signedIn,
    operationId: 'getSession',
    method: 'get',
    path: '/auth/session',
    summary: 'Retrieve the session',
    description: 'The signed-in user and the current team of this session.',
    response: s.session,
    handler: async ({ session }) => presentSession(session),
  }),
  defineOperation({
    ...open,
    operationId: 'requestPasswordReset',
    method: 'post',
    path: '/auth/password-reset',
    summary: 'Ask for a password reset',
    description:
      'Mails a reset link (valid one hour) to the address when it has an account. The answer is the same either way. Throttled per client address and per address (5 requests an hour, then 429 with retry-after, for any address).',
    body: z.object({ email: s.email.describe('The account address') }),
    response: z
      .object({ object: z.literal('password_reset'), requested: z.literal(true) })
      .meta({ id: 'PasswordResetRequested' }),
    handler: async ({ body, deps, ctx }) => {
      await guard(ctx, deps);
      const wait = await countMail(throttleDeps(deps), normalizeEmail(body.email));
      if (wait !== null) throttled(ctx, wait);
      const outbox = await mailer(deps).outbox();
      // An unknown address gets no mail, but its request does a mail's checks: both answers cost the same.
      await requestReset(deps.db, body.email, new Date(), (trx, o) => {
        const mail = resetMail(deps.config.PUBLIC_BASE_URL, o.user?.email ?? o.email, o.token);
        return o.user ? outbox.write(trx, mail) : outbox.rehearse(trx, mail);
      });
      await outbox.enqueue();
      return { object: 'password_reset' as const, requested: true as const };
    },
  }),
  defineOperation({
    ...open,
    operationId: 'resetPassword',
    method: 'post',
    path: '/auth/password-reset/confirm',
    summary: 'Set a new password',
    description:
      "Uses a reset mail's token (once): the new password is set, every session of the account ends and every OAuth grant it made (in any team) is revoked. Sign in again.",
    body: z.object({
      token: s.token512.describe("The token of the reset mail's link"),
      password: s.password.describe('The new password, 8-4096 characters'),
    }),
    response: z.object({ object: z.literal('user'), id: z.uuid() }).meta({ id: 'PasswordResetResult' }),
    handler: async ({ body, deps, ctx }) => {
      await guard(ctx, deps);
      const { user, revokedGrants } = await resetPassword(deps.db, body.token, body.password);
      for (const id of revokedGrants) await deps.oauth?.forgetGrant(id);
      clearSessionCookies(ctx, deps);
      return { object: 'user' as const, id: user.id };
    },
  }),
];
