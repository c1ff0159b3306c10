// The words of the account mails. Links point at the dashboard's pages (`/verify#token=…`, `/reset-password#token=…`,
// `/dashboard/invitation#token=…`): the token rides in the fragment, which no browser sends to a server or in a
// Referer. The old `/account#verify=…` links of mails already sent keep working (api/account/page.ts).
import type { AccountMail } from './mail.ts';
import { SIGNUP_TOKEN_HOURS, RESET_TOKEN_MINUTES } from './signup.ts';

/** The dashboard's page of each link. */
export const LINK_PAGES = { verify: '/verify', reset: '/reset-password', invite: '/dashboard/invitation' } as const;

const link = (base: string, what: keyof typeof LINK_PAGES, token: string) =>
  `${base}${LINK_PAGES[what]}#token=${encodeURIComponent(token)}`;

export function signupMail(base: string, to: string, token: string): AccountMail {
  return {
    kind: 'signup',
    to,
    subject: 'Confirm your email address',
    paragraphs: [
      'Welcome to Postwerk. Open this link to confirm your address and create your account:',
      link(base, 'verify', token),
      `The link works once, for ${SIGNUP_TOKEN_HOURS} hours. If you did not sign up, ignore this mail: no account is made.`,
    ],
  };
}

/** A sign-up for an address that has an account: its owner is told, and nothing else happens. */
export function signupExistingMail(base: string, to: string): AccountMail {
  return {
    kind: 'signup_existing',
    to,
    subject: 'You already have an account',
    paragraphs: [
      'Someone (perhaps you) tried to sign up to Postwerk with this address, which already has an account.',
      'Sign in here:',
      `${base}/sign-in`,
      'Forgot your password? Ask for a new one on the same page. If this was not you, you need do nothing.',
    ],
  };
}

export function resetMail(base: string, to: string, token: string): AccountMail {
  return {
    kind: 'password_reset',
    to,
    subject: 'Reset your password',
    paragraphs: [
      'Open this link to choose a new password for your Postwerk account:',
      link(base, 'reset', token),
      `The link works once, for ${RESET_TOKEN_MINUTES} minutes; using it signs out every session of the account. If you did not ask for it, ignore this mail.`,
    ],
  };
}

export function lockedMail(base: string, to: string, minutes: number, what: string): AccountMail {
  return {
    kind: 'locked',
    to,
    subject: 'Sign-in to your account is paused',
    paragraphs: [
      `After too many failed ${what}, sign-in to your Postwerk account is paused for up to ${minutes} minutes.`,
      'If this was not you, someone may be guessing your password: choose a new one here once the pause ends,',
      `${base}/reset-password`,
      'and turn on two-factor authentication if it is off.',
    ],
  };
}

export function invitationMail(
  base: string,
  to: string,
  token: string,
  invite: { team: string; inviter: string | null; role: string; days: number },
): AccountMail {
  return {
    kind: 'invitation',
    to,
    subject: `You are invited to ${invite.team} on Postwerk`,
    paragraphs: [
      `${invite.inviter ?? 'A team admin'} invited you to the team "${invite.team}" on Postwerk as ${invite.role}.`,
      'Sign in (or sign up) with this address, then open this link to join:',
      link(base, 'invite', token),
      `The invitation works once, for ${invite.days} days.`,
    ],
  };
}
