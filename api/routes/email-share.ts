// Share links of a sent email (reference/resend-api.md §1.1): POST /emails/{email_id}/share signs a self-contained
// link (shared/links/signed.ts, nothing stored), and GET /share/{token} opens it: a page for a person's browser
// (api/share/page.ts), the JSON view for any other client.
import { z } from 'zod';
import { getEmail } from '../../shared/emails/store.ts';
import { presentEmail } from '../../shared/emails/present.ts';
import { ServiceError } from '../../shared/errors.ts';
import { linkKey, linkRefused, nowSeconds, openLink, sealLink, type LinkClaims } from '../../shared/links/signed.ts';
import { expiredSharePage, invalidSharePage, sharedEmailPage, wantsPage } from '../share/page.ts';
import { defineOperation } from './operation.ts';
import { pathId, timestamp } from './schemas.ts';

const SHARE_LINK = 'email_share';

// Share links: `expires_in` is `<n> <unit>` or `<n><unit>` (`10m`, `2h`, `1 day`), 1 minute to 30 days.
const SHARE_DEFAULT_SECONDS = 48 * 3600;
const SHARE_MIN_SECONDS = 60;
const SHARE_MAX_SECONDS = 30 * 86_400;
const SHARE_UNITS: Record<string, number> = {
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hr: 3600,
  hrs: 3600,
  hour: 3600,
  hours: 3600,
  d: 86_400,
  day: 86_400,
  days: 86_400,
  w: 604_800,
  week: 604_800,
  weeks: 604_800,
};

export function parseExpiresIn(text: string): number {
  const m = /^(\d{1,7})\s*([a-z]+)$/.exec(text.trim().toLowerCase());
  const unit = m ? SHARE_UNITS[m[2]] : undefined;
  const problem = (message: string) =>
    new ServiceError('validation_error', `Invalid \`expires_in\`: ${message}.`, {
      errors: [{ path: 'expires_in', message }],
    });
  if (!m || !unit)
    throw problem('use `<n> <unit>` such as `10m`, `2 hours` or `1 day` (units: seconds, minutes, hours, days, weeks)');
  const seconds = Number(m[1]) * unit;
  if (seconds < SHARE_MIN_SECONDS || seconds > SHARE_MAX_SECONDS) throw problem('must be from 1 minute to 30 days');
  return seconds;
}

const shareView = z
  .object({
    object: z.literal('shared_email'),
    id: z.uuid(),
    from: z.string(),
    to: z.array(z.string()),
    subject: z.string(),
    created_at: timestamp,
    last_event: z.string(),
    text: z.string().nullable(),
    html: z.string().nullable().describe('The HTML source as a string: never served as text/html'),
    expires_at: timestamp.describe('When this share link stops working'),
  })
  .meta({ id: 'SharedEmail' });

/**
 * A share token: `open` (valid now), `expired` (ours, signed for this kind, its time passed) or `invalid` (anything
 * else, a token whose expiry lies further ahead than a share link may last included). The signature is checked
 * before the time (openLink at the epoch takes any expiry), so only a token we signed is ever called expired.
 */
function openShareLink(
  key: Buffer,
  token: string,
  now: Date,
): { state: 'open'; claims: LinkClaims } | { state: 'expired' | 'invalid' } {
  const claims = openLink(key, SHARE_LINK, token, new Date(0), Number.MAX_SAFE_INTEGER);
  if (!claims || claims.expires > nowSeconds(now) + SHARE_MAX_SECONDS) return { state: 'invalid' };
  if (claims.expires <= nowSeconds(now)) return { state: 'expired' };
  return { state: 'open', claims };
}

const emailParams = z.object({ email_id: pathId('sent email') });

export const emailShareOperations = [
  defineOperation({
    tag: 'emails',
    permission: 'full_access',
    operationId: 'shareEmail',
    method: 'post',
    path: '/emails/{email_id}/share',
    summary: 'Share a sent email',
    description:
      'Create a read-only share link to a sent email (`expires_in`: `10m`, `2 hours`, `1 day`; 1 minute to 30 days, default 48 hours). The link is signed, not stored: it cannot be revoked before it expires.',
    scope: 'emails:write',
    params: emailParams,
    body: z.object({
      expires_in: z
        .string()
        .max(64)
        .nullish()
        .describe(
          '`<n> <unit>` (seconds, minutes, hours, days, weeks; `m`, `h`, `d` too), 1 minute to 30 days; default 48 hours',
        ),
    }),
    response: z.object({ object: z.literal('email'), id: z.uuid(), url: z.url(), expires_at: timestamp }),
    handler: async ({ auth, params, body, deps }) => {
      const seconds = body.expires_in == null ? SHARE_DEFAULT_SECONDS : parseExpiresIn(body.expires_in);
      const email = await getEmail(deps.db, auth.team.id, params.email_id);
      const expires = nowSeconds() + seconds;
      const token = sealLink(linkKey(deps.config), {
        kind: SHARE_LINK,
        teamId: auth.team.id,
        objectId: email.id,
        expires,
      });
      return {
        object: 'email' as const,
        id: email.id,
        url: `${deps.config.PUBLIC_BASE_URL}/share/${token}`,
        expires_at: new Date(expires * 1000).toISOString(),
      };
    },
  }),
  defineOperation({
    operationId: 'viewSharedEmail',
    method: 'get',
    path: '/share/{token}',
    tag: 'emails',
    summary: 'View a shared email',
    description:
      "What a share link opens (no Authorization header; a User-Agent is required). A browser (`Accept: text/html`) gets a page: the email rendered in a sandboxed frame (no script runs) under a strict Content-Security-Policy, without any of its recipients' tracking (opening it records no open or click); an expired link and a link that is not valid each get a page that says so (410, 404). Any other client gets the JSON view below, where the HTML is a string field; there an expired or tampered link is the same 404.",
    permission: 'none',
    scope: null,
    params: z.object({
      token: z.string().describe('The last segment of the `url` that POST /emails/{email_id}/share answered'),
    }),
    // Raw: the handler answers a page or the JSON itself (the view is checked against its schema as it is sent).
    response: shareView.optional().describe('The JSON view; a browser asking for text/html gets the page instead'),
    raw: true,
    handler: async ({ params, deps, ctx }) => {
      const html = wantsPage(ctx);
      const link = openShareLink(linkKey(deps.config), params.token, new Date());
      if (link.state !== 'open') {
        if (!html) throw linkRefused();
        return link.state === 'expired' ? expiredSharePage(ctx) : invalidSharePage(ctx);
      }
      const { claims } = link;
      const row = await deps.db('emails').where({ id: claims.objectId, team_id: claims.teamId }).first();
      if (!row) {
        if (!html) throw linkRefused();
        return invalidSharePage(ctx);
      }
      const e = presentEmail(row);
      const view = {
        object: 'shared_email' as const,
        id: e.id,
        from: e.from,
        to: e.to,
        subject: e.subject,
        created_at: e.created_at,
        last_event: e.last_event,
        text: e.text,
        html: e.html,
        expires_at: new Date(claims.expires * 1000).toISOString(),
      };
      if (html) return sharedEmailPage(ctx, view);
      // JSON: whatever the HTML holds, no browser renders it here.
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'; sandbox");
      ctx.set('Referrer-Policy', 'no-referrer');
      ctx.set('X-Robots-Tag', 'noindex, nofollow');
      ctx.body = shareView.parse(view);
      return undefined;
    },
  }),
];
