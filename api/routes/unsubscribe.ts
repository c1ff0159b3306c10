// The unsubscribe and preference page behind the List-Unsubscribe URL the MTA writes
// (`<PUBLIC_BASE_URL>/unsubscribe/<token>`, mta/delivery/compose.ts). GET shows the page and changes nothing, since
// link scanners and mail previews fetch links. POST on the link unsubscribes: RFC 8058 one-click (the mailbox
// provider posts `List-Unsubscribe=One-Click`) and the page's own button alike. The page's forms post below the link:
// `/preferences` (the topic choices) and `/all` (unsubscribe from everything, or subscribe again). The token is the
// credential (a recipient id and its HMAC tag, compared in constant time): a form of the page cannot be forged from
// another site without it, and the page sends no Referer that would leak it. A token that is not ours answers the
// same 404 whatever is wrong with it: a page for a browser, the Error shape for any other client.
import { z } from 'zod';
import type { Context } from 'koa';
import {
  saveTopicChoices,
  setUnsubscribedAll,
  topicChoices,
  unsubscribe,
  unsubscribeTarget,
  type UnsubscribeTarget,
} from '../../shared/topics/unsubscribe.ts';
import { readFormBody } from '../middleware/body.ts';
import { secretsKey } from '../../shared/secrets.ts';
import { ServiceError } from '../../shared/errors.ts';
import { defineOperation, type HandlerInput } from './operation.ts';
import { linkNotFoundPage, pageLinks, preferencePage, senderOf, topicPhrase } from './unsubscribe-page.ts';

/** A browser gets a page; any other client the usual Error (404 not_found). */
function linkNotFound(ctx: Context): undefined {
  if (ctx.accepts('json', 'html') !== 'html') throw new ServiceError('not_found', 'Unsubscribe link not found.');
  return linkNotFoundPage(ctx);
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

type Input = HandlerInput<{ token: string }, undefined, undefined>;

/** A handler for the recipient the link names; a link that names nobody is refused before it runs. */
function forTarget(act: (target: UnsubscribeTarget, input: Input) => Promise<undefined>) {
  return async (input: Input) => {
    const target = await unsubscribeTarget(input.deps.db, secretsKey(input.deps.config), input.params.token);
    return target ? act(target, input) : linkNotFound(input.ctx);
  };
}

/** What a request did, as the page announces it: a sentence, or the page's own line on being unsubscribed. */
type Done = { notice: string } | { announced: true };

/** The preference page for `target`, with what the request just did. */
async function render(input: Input, target: UnsubscribeTarget, done?: Done): Promise<undefined> {
  const choices = await topicChoices(input.deps.db, target);
  return preferencePage(input.ctx, { target, choices, links: pageLinks(input.ctx.path, input.params.token), ...done });
}

/** The page after a change: the address as it stands now, read again. */
async function renderAfter(input: Input, done: Done): Promise<undefined> {
  const target = await unsubscribeTarget(input.deps.db, secretsKey(input.deps.config), input.params.token);
  return target ? render(input, target, done) : linkNotFound(input.ctx);
}

export const unsubscribeOperations = [
  defineOperation({
    ...base,
    operationId: 'showUnsubscribePage',
    method: 'get',
    path: '/unsubscribe/{token}',
    summary: 'Show the preference page',
    description:
      "The page a List-Unsubscribe link opens (HTML; no Authorization header): the one-click unsubscribe from the email's topic, the team's `public` topics with the address's choice for each (its own, else the topic's default), and unsubscribe from everything. Opening it changes nothing.",
    handler: forTarget((target, input) => render(input, target)),
  }),
  defineOperation({
    ...base,
    operationId: 'unsubscribe',
    method: 'post',
    path: '/unsubscribe/{token}',
    summary: 'Unsubscribe',
    description:
      "Unsubscribes the recipient the link names (RFC 8058 one-click, or the page's button): opts the address out of the email's topic, or, for mail without one (or whose topic was deleted), sets its contact's `unsubscribed` (making the contact if the address has none; `contact.created` or `contact.updated`). Idempotent; answers the preference page.",
    handler: forTarget(async (target, input) => {
      const done = await unsubscribe(input.deps.db, target);
      if (done === 'everything') return renderAfter(input, { announced: true });
      return renderAfter(input, {
        notice: `${target.address} no longer receives ${topicPhrase(target)} from ${senderOf(target)}.`,
      });
    }),
  }),
  defineOperation({
    ...base,
    operationId: 'saveUnsubscribePreferences',
    method: 'post',
    path: '/unsubscribe/{token}/preferences',
    summary: 'Save subscription preferences',
    description:
      "The page's topic form (`application/x-www-form-urlencoded`, a `topic` field per ticked box): each of the team's `public` topics is opted in when ticked and out when not; other ids are ignored. The contact's `unsubscribed` stays as it is. Answers the preference page.",
    handler: forTarget(async (target, input) => {
      const form = await readFormBody(input.ctx, FORM_LIMIT_BYTES);
      await saveTopicChoices(input.deps.db, target, new Set(form.getAll('topic')));
      return renderAfter(input, { notice: 'Your preferences are saved.' });
    }),
  }),
  defineOperation({
    ...base,
    operationId: 'setUnsubscribedAll',
    method: 'post',
    path: '/unsubscribe/{token}/all',
    summary: 'Unsubscribe from everything, or subscribe again',
    description:
      "The page's everything form (`application/x-www-form-urlencoded`): `unsubscribed=false` clears the contact's `unsubscribed`; anything else, an empty body too, sets it, making the contact if the address has none. Records `contact.created` or `contact.updated` when something changed. A contact unsubscribed from everything gets no send under a topic, whatever its topic choices. Answers the preference page.",
    handler: forTarget(async (target, input) => {
      const form = await readFormBody(input.ctx, FORM_LIMIT_BYTES);
      const unsubscribed = form.get('unsubscribed') !== 'false';
      await setUnsubscribedAll(input.deps.db, target, unsubscribed);
      return renderAfter(input, unsubscribed ? { announced: true } : { notice: 'You are subscribed again.' });
    }),
  }),
];
