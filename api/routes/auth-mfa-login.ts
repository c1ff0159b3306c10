// The second step of a sign-in with MFA on: the challenge of POST /auth/login with a TOTP code or a recovery
// code. Wrong codes count against the account (5 per challenge's user and window, then 429 and a mail to the
// owner) and against the client address; the challenge is spent by the first right code.
import { z } from 'zod';
import type { Context } from 'koa';
import { secretsKey } from '../../shared/secrets.ts';
import {
  badChallenge,
  badCode,
  challengeUser,
  checkCode,
  spendChallenge,
  useRecoveryCode,
} from '../../shared/accounts/mfa.ts';
import { throttleAttempt } from '../../shared/accounts/login.ts';
import { countFailure, WINDOW_SECONDS } from '../../shared/accounts/throttle.ts';
import { lockedMail } from '../../shared/accounts/messages.ts';
import type { UserRow } from '../../shared/accounts/users.ts';
import type { ApiDeps } from '../deps.ts';
import { defineOperation } from './operation.ts';
import { checkOrigin } from '../middleware/session.ts';
import * as s from './auth-schemas.ts';
import { mailer, startSession, throttleDeps, throttled } from './auth-common.ts';

const base = { tag: 'auth', permission: 'none', scope: null, method: 'post' } as const;

async function secondStep(
  ctx: Context,
  deps: ApiDeps,
  challenge: string,
  field: string,
  check: (user: UserRow) => Promise<boolean>,
) {
  checkOrigin(ctx, deps, false);
  const user = await challengeUser(deps.db, challenge);
  const wait = await throttleAttempt(throttleDeps(deps), ctx.ip, 'mfa', user?.id ?? challenge);
  if (wait !== null) throttled(ctx, wait);
  if (!user) throw badChallenge();
  if (!(await check(user))) {
    const { locked } = await countFailure(throttleDeps(deps), 'mfa', user.id);
    if (locked)
      mailer(deps).send(lockedMail(deps.config.PUBLIC_BASE_URL, user.email, WINDOW_SECONDS / 60, 'two-factor codes'));
    throw badCode(field);
  }
  if (!(await spendChallenge(deps.db, challenge))) throw badChallenge();
  return startSession(ctx, deps, user);
}

export const mfaLoginOperations = [
  defineOperation({
    ...base,
    operationId: 'verifyMfaLogin',
    path: '/auth/login/mfa',
    summary: 'Sign in: the two-factor code',
    description:
      "Completes a sign-in that answered an MfaChallenge with the authenticator's current code (a code of the previous or next 30 seconds is taken too; a code works once). Answers the Session and sets the cookies.",
    body: z.object({
      challenge_token: s.token512.describe('The challenge_token of the MfaChallenge (valid 5 minutes)'),
      code: s.mfaCode.describe('The 6-digit code of the authenticator app'),
    }),
    response: s.session,
    handler: async ({ body, deps, ctx }) =>
      secondStep(ctx, deps, body.challenge_token, 'code', (user) =>
        checkCode(deps.db, secretsKey(deps.config), user, body.code),
      ),
  }),
  defineOperation({
    ...base,
    operationId: 'recoverMfaLogin',
    path: '/auth/login/recovery',
    summary: 'Sign in: a recovery code',
    description:
      'Completes a sign-in that answered an MfaChallenge with one of the recovery codes shown when MFA was turned on; each code works once.',
    body: z.object({
      challenge_token: s.token512.describe('The challenge_token of the MfaChallenge (valid 5 minutes)'),
      recovery_code: s.mfaCode.describe('One unused recovery code, such as `abcde-fghjk`'),
    }),
    response: s.session,
    handler: async ({ body, deps, ctx }) =>
      secondStep(ctx, deps, body.challenge_token, 'recovery_code', (user) =>
        useRecoveryCode(deps.db, user.id, body.recovery_code),
      ),
  }),
];
