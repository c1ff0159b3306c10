// Every method of the official SDK (resend 6.38), called against the real api: none meets a route we lack (404
// "Route not found." or 405). A method of an area not built answers 501 not_implemented naming the area, so a
// client tells "not here yet" from "wrong call".
import test from 'ava';
import { Resend } from 'resend';
import { startPlatform, type Platform } from './helpers/platform.ts';

let p: Platform;
let resend: Resend;
const seen: { method: string; path: string; status: number; body: { name?: string; message?: string } }[] = [];

test.before(async () => {
  p = await startPlatform();
  const team = await p.createTeam('SDK surface');
  resend = new Resend(team.key, { baseUrl: p.url } as never);
  // Every request the SDK makes, with its answer (the SDK calls the global fetch).
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const res = await realFetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const text = await res.clone().text();
    let body = {};
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: a download
    }
    seen.push({ method, path: url.pathname, status: res.status, body });
    return res;
  };
});

test.after.always(async () => {
  await p?.close();
});

const id = '00000000-0000-4000-8000-000000000001';
const everything = {
  ...Object.fromEntries(
    ['id', 'inboxId', 'threadId', 'labelId', 'draftId', 'emailId', 'runId', 'automationId', 'webhookId', 'eventId']
      .concat(['domainId', 'contactId', 'audienceId', 'segmentId', 'topicId', 'broadcastId'])
      .map((k) => [k, id]),
  ),
  email: 'someone@example.com',
  from: 'a@example.com',
  to: 'b@example.com',
  subject: 'x',
  html: '<p>x</p>',
  name: 'x',
  emails: ['c@example.com'],
  steps: [],
  connections: [],
};
/** Argument lists tried in turn until the method makes a request. */
const argLists: unknown[][] = [[id, id, id], [everything], [id, everything]];

/** Methods that make no request of their own: client-side helpers and private steps of other methods. */
const noRequest = new Set([
  'contacts.imports.buildCreateFormData',
  'contacts.imports.buildColumnMap',
  'contacts.imports.appendField',
  'emails.receiving.forwardPassthrough', // private: forward's second step
  'emails.receiving.forwardWrapped', // private: forward's second step
  'emails.receiving.downloadRaw', // private: fetches a signed download_url it is given
  'webhooks.verify', // checks a signature locally
]);

/** Areas not built yet: every method reaching them answers 501. */
const unbuilt = ['automations.', 'events.', 'inboxes.', 'usage.'];

function methodsOf(obj: object): string[] {
  const out = new Set<string>();
  for (
    let proto = Object.getPrototypeOf(obj);
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  )
    for (const k of Object.getOwnPropertyNames(proto))
      if (k !== 'constructor' && typeof (obj as Record<string, unknown>)[k] === 'function') out.add(k);
  return [...out];
}

/** Every resource object under the client (`emails`, `emails.receiving.attachments`, ...) with its dotted name. */
function resources(obj: object, name = '', depth = 0): [string, Record<string, (...a: unknown[]) => unknown>][] {
  const out: [string, Record<string, (...a: unknown[]) => unknown>][] = [];
  for (const [k, v] of Object.entries(obj)) {
    if (!v || typeof v !== 'object' || k === 'resend' || k === 'headers' || v instanceof Headers || depth > 3) continue;
    if (!methodsOf(v).length) continue;
    const dotted = name ? `${name}.${k}` : k;
    out.push([dotted, v as Record<string, (...a: unknown[]) => unknown>], ...resources(v, dotted, depth + 1));
  }
  return out;
}

test('every SDK method reaches a route: a built one, or 501 not_implemented naming its area', async (t) => {
  const silent: string[] = [];
  let calls = 0;
  for (const [name, resource] of resources(resend)) {
    for (const method of methodsOf(resource)) {
      const full = `${name}.${method}`;
      const before = seen.length;
      for (const args of argLists) {
        try {
          await resource[method](...args);
        } catch {
          // a client-side refusal of these arguments: try the next list
        }
        if (seen.length > before) break;
      }
      const made = seen.slice(before);
      if (!made.length) {
        silent.push(full);
        continue;
      }
      calls++;
      for (const r of made) {
        const what = `${full}: ${r.method} ${r.path} -> ${r.status} ${JSON.stringify(r.body)}`;
        t.false(r.status === 404 && r.body.message === 'Route not found.', what);
        t.not(r.status, 405, what);
        if (r.status === 501) {
          t.is(r.body.name, 'not_implemented', what);
          t.regex(r.body.message ?? '', /^The [a-z-]+ area is not built yet/, what);
        }
      }
      if (unbuilt.some((u) => full.startsWith(u))) t.is(made[0].status, 501, `${full} is an unbuilt area's: 501`);
      else t.not(made[0].status, 501, `${full} is built`);
    }
  }
  t.deepEqual(silent.sort(), [...noRequest].sort(), 'methods that made no request');
  t.true(calls > 100, `${calls} methods called`);
});
