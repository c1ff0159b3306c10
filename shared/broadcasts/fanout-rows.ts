// One fan-out batch's writes after its recipients are materialised (audience.ts): an `emails` row per recipient
// (source `broadcast`, its own merged subject, html and text), its one email_recipients row and its email.sent
// event, three set-based INSERTs of JSON records, in the batch's transaction. The mta then delivers each as any
// email: its List-Unsubscribe names the recipient (mta/delivery/compose.ts), tracking rewrites its copy.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { eventRow } from '../events.ts';
import { unsubscribeToken } from '../emails/mail-tokens.ts';
import { emailEventData, type EmailRow } from '../emails/present.ts';
import {
  compileMerge,
  renderMerge,
  withPreview,
  type CompiledMerge,
  type MergeContext,
  type MergeContact,
} from './merge.ts';
import type { BroadcastRow } from './store.ts';
import { EMAIL_COLUMNS } from '../emails/columns.ts';

const COLUMNS = [...EMAIL_COLUMNS, 'broadcast_id'].map((c) => `"${c}"`).join(', ');

/** The team's contact properties, for merge tags. */
export async function mergeContext(db: Knex, teamId: string): Promise<MergeContext> {
  const rows: { key: string; fallback_value: unknown }[] = await db('contact_properties')
    .where({ team_id: teamId })
    .select('key', 'fallback_value');
  return { properties: new Map(rows.map((r) => [r.key.toLowerCase(), { key: r.key, fallback: r.fallback_value }])) };
}

/** A broadcast's parts compiled once for its fan-out. */
export interface CompiledBroadcast {
  row: BroadcastRow;
  subject: CompiledMerge;
  html: CompiledMerge | null;
  text: CompiledMerge | null;
  ctx: MergeContext;
  domain: { id: string; name: string };
}

export function compileBroadcast(
  row: BroadcastRow,
  ctx: MergeContext,
  domain: { id: string; name: string },
): CompiledBroadcast {
  const html = row.html === null ? null : withPreview(row.html, row.preview_text);
  return {
    row,
    subject: compileMerge(row.subject),
    html: html === null ? null : compileMerge(html),
    text: row.text === null ? null : compileMerge(row.text),
    ctx,
    domain,
  };
}

/** A recipient the batch materialised, with its contact's fields. */
export interface BatchRecipient extends MergeContact {
  email_id: string;
  address: string;
}

export interface LinkDeps {
  secrets: Buffer;
  publicBaseUrl: string;
}

function emailOf(b: CompiledBroadcast, r: BatchRecipient, recipientId: string, links: LinkDeps, now: Date) {
  const url = `${links.publicBaseUrl}/unsubscribe/${unsubscribeToken(links.secrets, recipientId)}`;
  const html = b.html && renderMerge(b.html, r, url, b.ctx, true);
  const text = b.text && renderMerge(b.text, r, url, b.ctx, false);
  const row: EmailRow & { broadcast_id: string } = {
    id: r.email_id,
    team_id: b.row.team_id,
    domain_id: b.domain.id,
    api_key_id: null,
    source: 'broadcast',
    from: b.row.from,
    from_address: r.address,
    to: [r.address],
    cc: [],
    bcc: [],
    reply_to: b.row.reply_to,
    subject: renderMerge(b.subject, r, url, b.ctx, false),
    html,
    text,
    headers: {},
    tags: [],
    topic_id: b.row.topic_id,
    template_id: null,
    message_id: `<${r.email_id}@${b.domain.name}>`,
    raw_blob_key: null,
    status: 'queued',
    last_event: 'sent',
    scheduled_at: null,
    size_bytes: Buffer.byteLength(html ?? '') + Buffer.byteLength(text ?? ''),
    request_id: null,
    created_at: now,
    updated_at: now,
    broadcast_id: b.row.id,
  };
  row.from_address = fromAddress(b.row.from);
  return row;
}

const fromAddress = (from: string) => (/<([^<>]+)>\s*$/.exec(from)?.[1] ?? from).trim().toLowerCase();

/** Writes the batch's emails, their recipients and email.sent events; answers the email ids. */
export async function writeEmails(
  trx: Knex,
  b: CompiledBroadcast,
  recipients: BatchRecipient[],
  links: LinkDeps,
  now: Date,
): Promise<string[]> {
  if (recipients.length === 0) return [];
  const emails = [];
  const rows = [];
  const events = [];
  for (const r of recipients) {
    const recipientId = newId();
    const email = emailOf(b, r, recipientId, links, now);
    emails.push(email);
    rows.push({
      id: recipientId,
      email_id: email.id,
      team_id: email.team_id,
      address: r.address,
      domain: r.address.slice(r.address.lastIndexOf('@') + 1),
      kind: 'to',
      status: 'queued',
      next_attempt_at: now,
      updated_at: now,
    });
    const event = eventRow(email.team_id, 'email.sent', emailEventData(email, { broadcast_id: b.row.id }));
    events.push({ ...event, data: JSON.parse(event.data) });
  }
  await trx.raw(
    `insert into emails (${COLUMNS}) select ${COLUMNS} from json_populate_recordset(null::emails, ?::json)`,
    [JSON.stringify(emails)],
  );
  await trx.raw(
    `insert into email_recipients (id, email_id, team_id, address, domain, kind, status, next_attempt_at, updated_at)
     select id, email_id, team_id, address, domain, kind, status, next_attempt_at, updated_at
     from json_populate_recordset(null::email_recipients, ?::json)`,
    [JSON.stringify(rows)],
  );
  await trx.raw(
    `insert into events (id, team_id, type, data) select id, team_id, type, data
     from json_populate_recordset(null::events, ?::json)`,
    [JSON.stringify(events)],
  );
  return emails.map((e) => e.id);
}
