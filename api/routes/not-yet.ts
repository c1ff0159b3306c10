// Operations of areas that are not built yet. Each is served (after the usual key checks) as 501
// not_implemented and documented, so clients and the README's feature table tell the same story. An area
// that lands removes its rows here and declares its real operations in its own file.
import { z } from 'zod';
import { defineOperation, type Method, type Operation, type Permission } from './operation.ts';

type Row = [Method, string, string, Permission?];

/** The SDK's `inboxes` surface: inboxes, their threads (emails, labels), labels, drafts and agent. */
function inboxRows(): Row[] {
  const crud = (base: string, one: string): Row[] => [
    ['post', base, 'inbox'],
    ['get', base, 'inbox'],
    ['get', `${base}/${one}`, 'inbox'],
    ['patch', `${base}/${one}`, 'inbox'],
    ['delete', `${base}/${one}`, 'inbox'],
  ];
  const thread = '/inboxes/{inbox_id}/threads/{thread_id}';
  return [
    ...crud('/inboxes', '{inbox_id}'),
    ['get', '/inboxes/{inbox_id}/threads', 'inbox'],
    ['get', '/inboxes/{inbox_id}/threads/search', 'inbox'],
    ['get', thread, 'inbox'],
    ['patch', thread, 'inbox'],
    ['delete', thread, 'inbox'],
    ['get', `${thread}/emails`, 'inbox'],
    ['get', `${thread}/emails/{email_id}`, 'inbox'],
    ['post', `${thread}/emails/{email_id}/reply`, 'inbox'],
    ['post', `${thread}/emails/{email_id}/forward`, 'inbox'],
    ['post', `${thread}/labels`, 'inbox'],
    ['put', `${thread}/labels`, 'inbox'],
    ['delete', `${thread}/labels/{label_id}`, 'inbox'],
    ['get', '/inboxes/{inbox_id}/labels', 'inbox'],
    ['post', '/inboxes/{inbox_id}/labels', 'inbox'],
    ['patch', '/inboxes/{inbox_id}/labels/{label_id}', 'inbox'],
    ['delete', '/inboxes/{inbox_id}/labels/{label_id}', 'inbox'],
    ...crud('/inboxes/{inbox_id}/drafts', '{draft_id}'),
    ['post', '/inboxes/{inbox_id}/drafts/{draft_id}/send', 'inbox'],
    ['get', '/inboxes/{inbox_id}/agent', 'inbox'],
    ['patch', '/inboxes/{inbox_id}/agent', 'inbox'],
  ];
}

const rows: Row[] = [
  ['get', '/emails/metrics', 'emails'],
  ['post', '/templates', 'templates'],
  ['get', '/templates', 'templates'],
  ['get', '/templates/{id_or_alias}', 'templates'],
  ['patch', '/templates/{id_or_alias}', 'templates'],
  ['delete', '/templates/{id_or_alias}', 'templates'],
  ['post', '/templates/{id_or_alias}/publish', 'templates'],
  ['post', '/templates/{id_or_alias}/duplicate', 'templates'],
  ['post', '/contacts', 'contacts'],
  ['get', '/contacts', 'contacts'],
  ['get', '/contacts/{id_or_email}', 'contacts'],
  ['patch', '/contacts/{id_or_email}', 'contacts'],
  ['delete', '/contacts/{id_or_email}', 'contacts'],
  ['post', '/contacts/imports', 'contacts'],
  ['get', '/contacts/imports', 'contacts'],
  ['get', '/contacts/imports/{id}', 'contacts'],
  ['get', '/contacts/{id_or_email}/segments', 'contacts'],
  ['post', '/contacts/{id_or_email}/segments/{segment_id}', 'contacts'],
  ['delete', '/contacts/{id_or_email}/segments/{segment_id}', 'contacts'],
  ['get', '/contacts/{id_or_email}/topics', 'contacts'],
  ['patch', '/contacts/{id_or_email}/topics', 'contacts'],
  // The SDK's older contact paths, under an audience (now a segment).
  ['post', '/audiences/{audience_id}/contacts', 'contacts'],
  ['get', '/audiences/{audience_id}/contacts', 'contacts'],
  ['get', '/audiences/{audience_id}/contacts/{id_or_email}', 'contacts'],
  ['patch', '/audiences/{audience_id}/contacts/{id_or_email}', 'contacts'],
  ['delete', '/audiences/{audience_id}/contacts/{id_or_email}', 'contacts'],
  ['post', '/contact-properties', 'contact-properties'],
  ['get', '/contact-properties', 'contact-properties'],
  ['get', '/contact-properties/{id}', 'contact-properties'],
  ['patch', '/contact-properties/{id}', 'contact-properties'],
  ['delete', '/contact-properties/{id}', 'contact-properties'],
  ['post', '/segments', 'segments'],
  ['get', '/segments', 'segments'],
  ['get', '/segments/{id}', 'segments'],
  ['patch', '/segments/{id}', 'segments'],
  ['delete', '/segments/{id}', 'segments'],
  ['get', '/segments/{id}/contacts', 'segments'],
  ['post', '/broadcasts', 'broadcasts'],
  ['get', '/broadcasts', 'broadcasts'],
  ['get', '/broadcasts/{id}', 'broadcasts'],
  ['patch', '/broadcasts/{id}', 'broadcasts'],
  ['delete', '/broadcasts/{id}', 'broadcasts'],
  ['post', '/broadcasts/{id}/send', 'broadcasts'],
  ['post', '/broadcasts/{id}/cancel', 'broadcasts'],
  ['post', '/broadcasts/{id}/duplicate', 'broadcasts'],
  ['get', '/broadcasts/{id}/recipients', 'broadcasts'],
  ['get', '/broadcasts/{id}/clicked-links', 'broadcasts'],
  ['post', '/automations', 'automations'],
  ['get', '/automations', 'automations'],
  ['get', '/automations/{id}', 'automations'],
  ['patch', '/automations/{id}', 'automations'],
  ['delete', '/automations/{id}', 'automations'],
  ['post', '/automations/{id}/duplicate', 'automations'],
  ['post', '/automations/{id}/stop', 'automations'],
  ['get', '/automations/{id}/runs', 'automations'],
  ['get', '/automations/{id}/runs/{run_id}', 'automations'],
  ['post', '/events', 'events'],
  ['get', '/events', 'events'],
  ['post', '/events/send', 'events'],
  ['get', '/events/{id}', 'events'],
  ['patch', '/events/{id}', 'events'],
  ['delete', '/events/{id}', 'events'],
  ['get', '/billing', 'billing'],
  ['get', '/usage', 'billing'],
  ['post', '/billing/checkout', 'billing'],
  ['post', '/billing/addons', 'billing'],
  ...inboxRows(),
  ['get', '/oauth/grants', 'oauth'],
  ['delete', '/oauth/grants/{id}', 'oauth'],
];

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

export const notYetOperations: Operation[] = rows.map(([method, path, tag, permission]) => {
  const names = [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]);
  return defineOperation({
    operationId: operationId(method, path),
    method,
    path,
    tag,
    summary: `Not implemented yet (the ${tag} area): answers 501 not_implemented.`,
    permission: permission ?? 'full_access',
    scope: scopeOf(method, tag, permission),
    params: names.length ? z.object(Object.fromEntries(names.map((n) => [n, z.string()]))) : undefined,
    response: z.object({}),
    notImplemented: true,
    handler: async () => ({}),
  });
});
