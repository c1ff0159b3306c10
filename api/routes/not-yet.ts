// Operations of areas that are not built yet. Each is served (after the usual key checks) as 501
// not_implemented and documented, so clients and the README's feature table tell the same story. An area
// that lands removes its rows here and declares its real operations in its own file.
import { z } from 'zod';
import { defineOperation, type Method, type Operation, type Permission } from './operation.ts';

/** Method, path, tag, title (the operation's summary), and the permission when it is not full_access. */
type Row = [Method, string, string, string, Permission?];

/** The SDK's `inboxes` surface: inboxes, their threads (emails, labels), labels, drafts and agent. */
function inboxRows(): Row[] {
  const crud = (base: string, one: string, what: string): Row[] => [
    ['post', base, 'inbox', `Create ${what}`],
    ['get', base, 'inbox', `List ${what}s`],
    ['get', `${base}/${one}`, 'inbox', `Retrieve ${what}`],
    ['patch', `${base}/${one}`, 'inbox', `Update ${what}`],
    ['delete', `${base}/${one}`, 'inbox', `Delete ${what}`],
  ];
  const thread = '/inboxes/{inbox_id}/threads/{thread_id}';
  return [
    ...crud('/inboxes', '{inbox_id}', 'an inbox'),
    ['get', '/inboxes/{inbox_id}/threads', 'inbox', "List an inbox's threads"],
    ['get', '/inboxes/{inbox_id}/threads/search', 'inbox', "Search an inbox's threads"],
    ['get', thread, 'inbox', 'Retrieve a thread'],
    ['patch', thread, 'inbox', 'Update a thread'],
    ['delete', thread, 'inbox', 'Delete a thread'],
    ['get', `${thread}/emails`, 'inbox', "List a thread's emails"],
    ['get', `${thread}/emails/{email_id}`, 'inbox', "Retrieve a thread's email"],
    ['post', `${thread}/emails/{email_id}/reply`, 'inbox', "Reply to a thread's email"],
    ['post', `${thread}/emails/{email_id}/forward`, 'inbox', "Forward a thread's email"],
    ['post', `${thread}/labels`, 'inbox', 'Add labels to a thread'],
    ['put', `${thread}/labels`, 'inbox', "Set a thread's labels"],
    ['delete', `${thread}/labels/{label_id}`, 'inbox', 'Remove a label from a thread'],
    ['get', '/inboxes/{inbox_id}/labels', 'inbox', "List an inbox's labels"],
    ['post', '/inboxes/{inbox_id}/labels', 'inbox', 'Create a label'],
    ['patch', '/inboxes/{inbox_id}/labels/{label_id}', 'inbox', 'Update a label'],
    ['delete', '/inboxes/{inbox_id}/labels/{label_id}', 'inbox', 'Delete a label'],
    ...crud('/inboxes/{inbox_id}/drafts', '{draft_id}', 'a draft'),
    ['post', '/inboxes/{inbox_id}/drafts/{draft_id}/send', 'inbox', 'Send a draft'],
    ['get', '/inboxes/{inbox_id}/agent', 'inbox', "Retrieve an inbox's agent"],
    ['patch', '/inboxes/{inbox_id}/agent', 'inbox', "Update an inbox's agent"],
  ];
}

const rows: Row[] = [
  ['post', '/automations', 'automations', 'Create an automation'],
  ['get', '/automations', 'automations', 'List automations'],
  ['get', '/automations/{id}', 'automations', 'Retrieve an automation'],
  ['patch', '/automations/{id}', 'automations', 'Update an automation'],
  ['delete', '/automations/{id}', 'automations', 'Delete an automation'],
  ['post', '/automations/{id}/duplicate', 'automations', 'Duplicate an automation'],
  ['post', '/automations/{id}/stop', 'automations', 'Stop an automation'],
  ['get', '/automations/{id}/runs', 'automations', "List an automation's runs"],
  ['get', '/automations/{id}/runs/{run_id}', 'automations', 'Retrieve an automation run'],
  ['post', '/events', 'events', 'Create an event'],
  ['get', '/events', 'events', 'List events'],
  ['post', '/events/send', 'events', 'Send an event'],
  ['get', '/events/{id}', 'events', 'Retrieve an event'],
  ['patch', '/events/{id}', 'events', 'Update an event'],
  ['delete', '/events/{id}', 'events', 'Delete an event'],
  ['get', '/billing', 'billing', 'Retrieve billing'],
  ['get', '/usage', 'billing', 'Retrieve usage'],
  ['post', '/billing/checkout', 'billing', 'Start a checkout'],
  ['post', '/billing/addons', 'billing', 'Add a billing add-on'],
  ...inboxRows(),
];

/** The path parameters of these areas, described once; `{id}` by what the path before it lists. */
const PARAMS: Record<string, string> = {
  run_id: "The automation run's id",
  inbox_id: "The inbox's id",
  thread_id: "The thread's id",
  email_id: "The email's id",
  label_id: "The label's id",
  draft_id: "The draft's id",
};
const ID_OF: Record<string, string> = {
  '/automations': 'automation',
  '/events': 'event',
};
const describeParam = (name: string, path: string): string | undefined =>
  name === 'id' ? `The ${ID_OF[path.slice(0, path.indexOf('/{id}'))]}'s id` : PARAMS[name];

function operationId(method: Method, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/[{}]/g, '').replace(/[-_](.)/g, (_, c: string) => c.toUpperCase()));
  return ['notImplemented', method, ...words].map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join('');
}

/** Spec, Authentication 5: no scope reaches OAuth grants or billing writes; billing reads need billing:read. */
function scopeOf(method: Method, tag: string, permission: Permission | undefined): string | null {
  if (tag === 'oauth' || (tag === 'billing' && method !== 'get')) return null;
  if (permission === 'sending_access') return `${tag}:send`;
  return `${tag}:${method === 'get' ? 'read' : 'write'}`;
}

export const notYetOperations: Operation[] = rows.map(([method, path, tag, title, permission]) => {
  const names = [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]);
  return defineOperation({
    operationId: operationId(method, path),
    method,
    path,
    tag,
    summary: `${title} (not built yet)`,
    description: `Not built yet on this platform: after the usual credential checks it answers 501 \`not_implemented\`. Declared so that clients, this reference and the README's feature table tell the same story.`,
    permission: permission ?? 'full_access',
    scope: scopeOf(method, tag, permission),
    params: names.length
      ? z.object(Object.fromEntries(names.map((n) => [n, z.string().describe(describeParam(n, path) ?? '')])))
      : undefined,
    response: z.object({}),
    notImplemented: true,
    handler: async () => ({}),
  });
});
