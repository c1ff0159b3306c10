// The unsubscribe page behind the List-Unsubscribe URL the MTA writes (`<PUBLIC_BASE_URL>/unsubscribe/<token>`,
// mta/delivery/compose.ts). GET shows what the link does and asks to confirm: it changes nothing, since link
// scanners and mail previews fetch links. POST unsubscribes: RFC 8058 one-click (the mailbox provider posts
// `List-Unsubscribe=One-Click`) and the page's own button alike. A token that is not ours answers the same 404
// whatever is wrong with it: a page for a browser, the Error shape for any other client.
import { z } from 'zod';
import type { Context } from 'koa';
import {
  saveTopicChoices,
  topicChoices,
  unsubscribe,
  unsubscribeTarget,
  type TopicChoice,
  type UnsubscribeTarget,
} from '../../shared/topics/unsubscribe.ts';
import { readFormBody } from '../middleware/body.ts';
import { secretsKey } from '../../shared/secrets.ts';
import { ServiceError } from '../../shared/errors.ts';
import { defineOperation, type HandlerInput } from './operation.ts';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** What the person is leaving: the topic by name, else the sender's mail. */
const what = (t: UnsubscribeTarget) => (t.topic ? `“${escapeHtml(t.topic.name)}” emails` : 'these emails');

function page(ctx: Context, status: number, title: string, body: string): undefined {
  // Inert: no script, nothing loaded, the form posts only back here; never cached or indexed.
  ctx.set(
    'Content-Security-Policy',
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  );
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Robots-Tag', 'noindex, nofollow');
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}button{font:inherit;padding:.5rem 1rem}</style>
</head><body><h1>${title}</h1>${body}</body></html>`;
  return undefined;
}

/** The preference form: each listed topic with a box, ticked when subscribed; posts to `<link>/preferences`. */
function preferenceForm(ctx: Context, choices: TopicChoice[]): string {
  if (choices.length === 0) return '';
  const rows = choices.map(
    (c) =>
      `<p><label><input type="checkbox" name="topic" value="${c.id}"${c.subscribed ? ' checked' : ''}> ${escapeHtml(c.name)}</label>${c.description ? `<br><small>${escapeHtml(c.description)}</small>` : ''}</p>`,
  );
  // Relative, so it holds behind a proxy that serves the api under a path of its own (PUBLIC_BASE_URL's).
  const action = ctx.path.endsWith('/preferences')
    ? 'preferences'
    : `${ctx.path.slice(ctx.path.lastIndexOf('/') + 1)}/preferences`;
  return `<h2>Your subscriptions</h2><form method="post" action="${escapeHtml(action)}">${rows.join('')}<button type="submit">Save preferences</button></form>`;
}

/** A browser gets a page; any other client the usual Error (404 not_found). */
function linkNotFound(ctx: Context): undefined {
  if (ctx.accepts('json', 'html') !== 'html') throw new ServiceError('not_found', 'Unsubscribe link not found.');
  return page(
    ctx,
    404,
    'Link not found',
    '<p>This unsubscribe link is not valid. If you copied it, check that it is complete.</p>',
  );
}

/** A preference form is a few ids: more is not a form of ours. */
const FORM_LIMIT_BYTES = 64 * 1024;

const params = z.object({ token: z.string().describe('From the List-Unsubscribe URL') });
const base = {
  tag: 'unsubscribe',
  permission: 'none',
  scope: null,
  params,
  raw: true,
  response: z.string().optional().describe('An HTML page'),
} as const;

/** A handler for the recipient the link names; a link that names nobody is refused before it runs. */
function forTarget(
  render: (
    target: UnsubscribeTarget,
    input: HandlerInput<{ token: string }, undefined, undefined>,
  ) => Promise<undefined>,
) {
  return async (input: HandlerInput<{ token: string }, undefined, undefined>) => {
    const target = await unsubscribeTarget(input.deps.db, secretsKey(input.deps.config), input.params.token);
    return target ? render(target, input) : linkNotFound(input.ctx);
  };
}

const unsubscribedPage = (ctx: Context, target: UnsubscribeTarget, preferences: string) =>
  page(
    ctx,
    200,
    'You are unsubscribed',
    `<p>${escapeHtml(target.address)} no longer receives ${what(target)} from ${escapeHtml(target.from)}.</p>${preferences}`,
  );

export const unsubscribeOperations = [
  defineOperation({
    ...base,
    operationId: 'showUnsubscribePage',
    method: 'get',
    path: '/unsubscribe/{token}',
    summary: 'Show the unsubscribe page',
    description:
      'The unsubscribe page a List-Unsubscribe link opens (HTML; no Authorization header). Shows what the link does and a button to confirm; opening it changes nothing.',
    handler: forTarget(async (target, { deps, ctx }) => {
      const preferences = preferenceForm(ctx, await topicChoices(deps.db, target));
      if (target.unsubscribed) return unsubscribedPage(ctx, target, preferences);
      return page(
        ctx,
        200,
        'Unsubscribe',
        `<p>Stop sending ${what(target)} from ${escapeHtml(target.from)} to ${escapeHtml(target.address)}?</p>
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>${preferences}`,
      );
    }),
  }),
  defineOperation({
    ...base,
    operationId: 'unsubscribe',
    method: 'post',
    path: '/unsubscribe/{token}',
    summary: 'Unsubscribe',
    description:
      "Unsubscribes the recipient the link names (RFC 8058 one-click, or the page's button): from the email's topic, or, for mail without one, onto the team's suppression list (origin `unsubscribe`). Idempotent; answers an HTML page.",
    handler: forTarget(async (target, { deps, ctx }) => {
      await unsubscribe(deps.db, target);
      return unsubscribedPage(ctx, target, preferenceForm(ctx, await topicChoices(deps.db, target)));
    }),
  }),
  defineOperation({
    ...base,
    operationId: 'saveUnsubscribePreferences',
    method: 'post',
    path: '/unsubscribe/{token}/preferences',
    summary: 'Save subscription preferences',
    description:
      "The preference form of the unsubscribe page (`application/x-www-form-urlencoded`, a `topic` field per ticked box): every topic the page lists (the team's `public` topics and the email's own) is opted in when ticked and out when not. Answers an HTML page.",
    handler: forTarget(async (target, { deps, ctx }) => {
      const form = await readFormBody(ctx, FORM_LIMIT_BYTES);
      const saved = await saveTopicChoices(deps.db, target, new Set(form.getAll('topic')));
      return page(
        ctx,
        200,
        'Preferences saved',
        `<p>Saved for ${escapeHtml(target.address)}.</p>${preferenceForm(ctx, saved)}`,
      );
    }),
  }),
];
