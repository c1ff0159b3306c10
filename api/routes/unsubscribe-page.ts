// The preference page a List-Unsubscribe link opens, as HTML (api/routes/unsubscribe.ts serves it). Server-rendered
// and inert: no script at all, nothing loaded, one stylesheet inline and allowed by its hash in the
// Content-Security-Policy, forms that post back to the link only. Every value from a row is escaped.
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { TopicChoice, UnsubscribeTarget } from '../../shared/topics/unsubscribe.ts';
import { parseMailbox } from '../../shared/emails/addresses.ts';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// Contrast (WCAG 2.2 AA, 4.5:1 for text, 3:1 for controls): text #1b1f24 and muted #4b5563 on white, white on
// #0b57d0, #a4262c on white, all 6.3:1 or more. Buttons at least 44 px high (2.75rem), boxes 24 px (WCAG 2.5.8) with
// their labels clickable too; a visible focus ring.
const CSS = `*,*::before,*::after{box-sizing:border-box}
body{margin:0;background:#f3f4f6;color:#1b1f24;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;overflow-wrap:anywhere}
main{max-width:38rem;margin:2.5rem auto;padding:2rem;background:#fff;border:1px solid #d0d7de;border-radius:.75rem}
h1{font-size:1.6rem;line-height:1.25;margin:0 0 .5rem}
h2{font-size:1.15rem;margin:0 0 .5rem}
p{margin:0 0 1rem}
section{border-top:1px solid #d0d7de;padding-top:1.25rem;margin-top:1.5rem}
.lead,.hint{color:#4b5563}
.notice,.callout{padding:.75rem 1rem;border-radius:.4rem;border-left:4px solid}
.notice{background:#e9f6ee;border-color:#1a7f37}
.callout{background:#fdf3e7;border-color:#a85b00}
fieldset{border:0;margin:0 0 1rem;padding:0}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
.topic{display:grid;grid-template-columns:auto 1fr;column-gap:.75rem;padding:.6rem 0}
.topic+.topic{border-top:1px solid #eaeef2}
.topic input{width:1.5rem;height:1.5rem;margin:.15rem 0 0;accent-color:#0b57d0}
.topic label{font-weight:600;cursor:pointer}
.topic .hint{grid-column:2;margin:0}
button{font:inherit;font-weight:600;min-height:2.75rem;padding:.55rem 1.2rem;border-radius:.4rem;cursor:pointer;border:2px solid #0b57d0;background:#0b57d0;color:#fff}
button.quiet{background:#fff;color:#0b57d0}
button.danger{background:#fff;color:#a4262c;border-color:#a4262c}
:focus-visible{outline:3px solid #0b57d0;outline-offset:3px}
@media (max-width:30rem){body{background:#fff}main{margin:0;border:0;border-radius:0;padding:1.25rem 1rem}button{width:100%}h1{font-size:1.4rem}}`;

/** The page's Content-Security-Policy: nothing but its own stylesheet, forms posting back here, never framed. */
export const PAGE_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(CSS).digest('base64')}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

/** Sends `body` as a page titled `title`: never cached (the api's default), referred, indexed or framed. */
export function sendPage(ctx: Context, status: number, title: string, body: string): undefined {
  ctx.set('Content-Security-Policy', PAGE_CSP);
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Robots-Tag', 'noindex, nofollow');
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${CSS}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
  return undefined;
}

/** The one page for every link that names nobody: nothing about why (forged, cut short, or its email gone). */
export function linkNotFoundPage(ctx: Context): undefined {
  return sendPage(
    ctx,
    404,
    'This link does not work',
    `<p>The link is incomplete or no longer valid. If you copied it from an email, check that you copied all of it.</p>
<p class="hint">Your email app's own unsubscribe button works too.</p>`,
  );
}

/** Where the page's forms post, relative to the page (so a proxy's path prefix holds): the link, and two below it. */
export interface PageLinks {
  self: string;
  preferences: string;
  all: string;
}

export function pageLinks(path: string, token: string): PageLinks {
  // On /unsubscribe/<token> a relative URL resolves beside the token; on /unsubscribe/<token>/<x>, under it.
  if (path.endsWith(`/${token}`)) return { self: token, preferences: `${token}/preferences`, all: `${token}/all` };
  return { self: `../${token}`, preferences: 'preferences', all: 'all' };
}

export interface PageState {
  target: UnsubscribeTarget;
  choices: TopicChoice[];
  links: PageLinks;
  /** What the request just did, announced at the top. */
  notice?: string;
  /** The request unsubscribed the address from everything: the line saying so is the announcement. */
  announced?: boolean;
}

/** The sender as the page's sentences name it: the From's display name, else its address. */
export function senderOf(target: UnsubscribeTarget): string {
  try {
    const from = parseMailbox(target.from);
    return from.name ?? from.address;
  } catch {
    return target.from;
  }
}

/** The email's topic by name, when the page may name it (a private topic's name is the team's own business). */
export function topicPhrase(target: UnsubscribeTarget): string {
  return target.topic?.visibility === 'public' ? `“${target.topic.name}” emails` : 'emails like this one';
}

/** "This email": its topic and the one-click unsubscribe from it; nothing for mail without a topic. */
function thisEmail({ target, links }: PageState): string {
  if (!target.topic) return '';
  const named = target.topic.visibility === 'public' ? `“${escapeHtml(target.topic.name)}”` : null;
  const body = target.optedOut
    ? `<p>You no longer get ${escapeHtml(topicPhrase(target))}.</p>`
    : `<p>${named ? `You got this email because you are subscribed to ${named}.` : `Stop getting emails like this one from ${escapeHtml(senderOf(target))}?`}</p>
<form method="post" action="${escapeHtml(links.self)}"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe from ${named ?? 'emails like this'}</button></form>`;
  return `<section aria-labelledby="this-email"><h2 id="this-email">This email</h2>${body}</section>`;
}

/** The team's public topics, each a box ticked when the address is subscribed, and the save button. */
function topicsForm({ target, choices, links }: PageState): string {
  const from = escapeHtml(senderOf(target));
  if (choices.length === 0)
    return `<section aria-labelledby="topics"><h2 id="topics">Your subscriptions</h2><p>${from} offers no mailing lists to choose from.</p></section>`;
  const rows = choices.map((c) => {
    const hint = c.description ? `<p class="hint" id="d-${c.id}">${escapeHtml(c.description)}</p>` : '';
    const describedBy = c.description ? ` aria-describedby="d-${c.id}"` : '';
    return `<div class="topic"><input type="checkbox" id="t-${c.id}" name="topic" value="${c.id}"${c.subscribed ? ' checked' : ''}${describedBy}><label for="t-${c.id}">${escapeHtml(c.name)}</label>${hint}</div>`;
  });
  const kept = target.unsubscribedAll
    ? '<p class="hint">While you are unsubscribed from everything, your choices are kept but you get none of these.</p>'
    : '';
  return `<section aria-labelledby="topics"><h2 id="topics">Your subscriptions</h2><p class="hint">Tick what you want to get from ${from}.</p>${kept}
<form method="post" action="${escapeHtml(links.preferences)}"><fieldset><legend class="visually-hidden">Topics</legend>${rows.join('')}</fieldset><button type="submit">Save preferences</button></form></section>`;
}

/** Unsubscribe from everything, or, once done, subscribe again. */
function everything({ target, choices, links }: PageState): string {
  const from = escapeHtml(senderOf(target));
  const action = escapeHtml(links.all);
  if (target.unsubscribedAll)
    return `<section aria-labelledby="everything"><h2 id="everything">Subscribe again</h2><p>Get newsletters and updates from ${from} again${choices.length ? ', as chosen above' : ''}.</p>
<form method="post" action="${action}"><input type="hidden" name="unsubscribed" value="false"><button type="submit" class="quiet">Subscribe again</button></form></section>`;
  return `<section aria-labelledby="everything"><h2 id="everything">Unsubscribe from everything</h2><p>No more newsletters or updates from ${from}${choices.length ? ', whatever you chose above' : ''}. Emails about things you do, such as receipts or password resets, still reach you.</p>
<form method="post" action="${action}"><input type="hidden" name="unsubscribed" value="true"><button type="submit" class="danger">Unsubscribe from everything</button></form></section>`;
}

/**
 * The preference page for the link's address. `notice` says what the request just did; `announced` marks a request
 * that unsubscribed the address from everything, whose notice is the page's own line saying so.
 */
export function preferencePage(ctx: Context, state: PageState): undefined {
  const { target, notice, announced } = state;
  const status = notice ? `<p class="notice" role="status">${escapeHtml(notice)}</p>` : '';
  const standing = target.unsubscribedAll
    ? `<p class="callout"${announced ? ' role="status"' : ''}>You are unsubscribed from everything from ${escapeHtml(senderOf(target))}.</p>`
    : '';
  return sendPage(
    ctx,
    200,
    'Email preferences',
    `<p class="lead">Emails from <strong>${escapeHtml(target.from)}</strong> to <strong>${escapeHtml(target.address)}</strong>.</p>
${status}${standing}${thisEmail(state)}${topicsForm(state)}${everything(state)}`,
  );
}
