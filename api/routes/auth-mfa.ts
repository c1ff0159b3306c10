// MFA of the signed-in user: status, enrolment (a new TOTP secret and its otpauth URL), confirming it with a code
// (MFA on, ten recovery codes shown once), turning it off (with the password or a code), and new recovery codes.
// Turning MFA on or off rotates the session's token (a change of privilege).
import { z } from 'zod';
import type { Context } from 'koa';
import { ServiceError } from '../../shared/errors.ts';
import { secretsKey } from '../../shared/secrets.ts';
import * as mfa from '../../shared/accounts/mfa.ts';
import { verifyPassword } from '../../shared/accounts/passwords.ts';
import { getUser, type UserRow } from '../../shared/accounts/users.ts';
import { rotateSession, type ActiveSession } from '../../shared/accounts/sessions.ts';
import { countFailure, lockedFor } from '../../shared/accounts/throttle.ts';
import type { ApiDeps } from '../deps.ts';
import { defineOperation } from './operation.ts';
import { setSessionCookies } from '../middleware/session.ts';
import * as s from './auth-schemas.ts';
import { throttleDeps, throttled } from './auth-common.ts';

const base = { tag: 'auth', permission: 'session', scope: null } as const;

const mfaStatus = z
  .object({
    object: z.literal('mfa'),
    enabled: z.boolean(),
    enabled_at: z.iso.datetime().nullable(),
    enrolling: z.boolean(),
    recovery_codes_remaining: z.number().int(),
    has_password: z.boolean(),
  })
  .meta({ id: 'MfaStatus' });

/** A re-check of the signed-in user (password or code) before a change of MFA: throttled as sign-ins are. */
async function proveIt(ctx: Context, deps: ApiDeps, user: UserRow, given: { password?: string; code?: string }) {
  const wait = await lockedFor(throttleDeps(deps), 'mfa', user.id);
  if (wait !== null) throttled(ctx, wait);
  let ok = false;
  if (given.password !== undefined) ok = await verifyPassword(user.password_hash, given.password);
  else if (given.code !== undefined) ok = await mfa.checkCode(deps.db, secretsKey(deps.config), user, given.code);
  if (ok) return;
  await countFailure(throttleDeps(deps), 'mfa', user.id);
  const path = given.password !== undefined ? 'password' : 'code';
  throw new ServiceError('validation_error', `Invalid \`${path}\`: it is not right.`, {
    errors: [{ path, message: 'not right' }],
  });
}

async function rotate(ctx: Context, deps: ApiDeps, session: ActiveSession) {
  const token = await rotateSession(deps.db, session.session.id);
  setSessionCookies(ctx, deps, token, session.session.expires_at);
}

export const mfaOperations = [
  defineOperation({
    ...base,
    operationId: 'getMfa',
    method: 'get',
    path: '/auth/mfa',
    summary: 'Retrieve the MFA status',
    description:
      'Whether two-factor authentication is on, an enrolment is pending, and how many recovery codes are left.',
    response: mfaStatus,
    handler: async ({ session, deps }) => mfa.status(deps.db, session.user),
  }),
  defineOperation({
    ...base,
    operationId: 'enrolMfa',
    method: 'post',
    path: '/auth/mfa/enrol',
    summary: 'Start an MFA enrolment',
    description:
      'A new TOTP secret (SHA-1, 6 digits, 30 s) and its `otpauth://` URL for an authenticator app; MFA turns on once a code of it is confirmed. A second enrolment replaces a pending one.',
    body: z.object({}),
    response: z
      .object({ object: z.literal('mfa_enrolment'), otpauth_url: z.string(), secret: z.string() })
      .meta({ id: 'MfaEnrolment' }),
    handler: async ({ session, deps }) => mfa.enrol(deps.db, secretsKey(deps.config), session.user),
  }),
  defineOperation({
    ...base,
    operationId: 'confirmMfa',
    method: 'post',
    path: '/auth/mfa/confirm',
    summary: 'Confirm the MFA enrolment',
    description:
      "Turns MFA on with a code of the pending enrolment and the account's password. Answers ten recovery codes, shown this once. The session's token is replaced.",
    body: z.object({
      code: s.mfaCode.describe('A current code of the enrolment secret'),
      password: z.string().max(4096).optional().describe("The account's password (required when it has one)"),
    }),
    response: z
      .object({
        object: z.literal('mfa'),
        enabled: z.literal(true),
        enabled_at: z.iso.datetime(),
        recovery_codes: z.array(z.string()),
      })
      .meta({ id: 'MfaActivated' }),
    handler: async ({ session, body, deps, ctx }) => {
      if (session.user.password_hash) {
        if (body.password === undefined) throw new ServiceError('missing_required_field', 'Missing `password` field.');
        await proveIt(ctx, deps, session.user, { password: body.password });
      }
      const activated = await mfa.confirm(deps.db, secretsKey(deps.config), session.user, body.code);
      await rotate(ctx, deps, session);
      return activated;
    },
  }),
  defineOperation({
    ...base,
    operationId: 'disableMfa',
    method: 'post',
    path: '/auth/mfa/disable',
    summary: 'Turn MFA off',
    description:
      "Turns two-factor authentication off, proven with the account's password or a current code; the recovery codes go. The session's token is replaced.",
    body: z.object({
      password: z.string().max(4096).optional().describe("The account's password (or give `code`)"),
      code: s.mfaCode.optional().describe('A current code of the authenticator (or give `password`)'),
    }),
    response: z
      .object({ object: z.literal('mfa'), enabled: z.literal(false), enabled_at: z.null() })
      .meta({ id: 'MfaDisabled' }),
    handler: async ({ session, body, deps, ctx }) => {
      if (body.password === undefined && body.code === undefined)
        throw new ServiceError('missing_required_field', 'Give `password` or `code`.');
      if (!mfa.mfaEnabled(session.user))
        throw new ServiceError('validation_error', 'Two-factor authentication is not on.');
      await proveIt(ctx, deps, session.user, body);
      const done = await mfa.disable(deps.db, session.user.id);
      await rotate(ctx, deps, session);
      return done;
    },
  }),
  defineOperation({
    ...base,
    operationId: 'regenerateMfaRecoveryCodes',
    method: 'post',
    path: '/auth/mfa/recovery-codes',
    summary: 'New recovery codes',
    description: 'Replaces every recovery code with ten new ones (shown this once), proven with a current code.',
    body: z.object({ code: s.mfaCode.describe('A current code of the authenticator') }),
    response: z
      .object({ object: z.literal('mfa_recovery_codes'), recovery_codes: z.array(z.string()) })
      .meta({ id: 'MfaRecoveryCodes' }),
    handler: async ({ session, body, deps, ctx }) => {
      const user = await getUser(deps.db, session.user.id);
      if (!mfa.mfaEnabled(user)) throw new ServiceError('validation_error', 'Two-factor authentication is not on.');
      await proveIt(ctx, deps, user, { code: body.code });
      return {
        object: 'mfa_recovery_codes' as const,
        recovery_codes: await mfa.replaceRecoveryCodes(deps.db, user.id),
      };
    },
  }),
];
