// The audit log (migrations/20261127010000_audit_log.ts): one append-only row per action on a team's data that
// someone may have to answer for later. Written in the transaction of the action it records, so the trail and the
// data never disagree. Later areas record their own actions with recordAudit; docs/audit-log.md lists the actions.
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import { paginate, type ListQuery } from '../pagination.ts';

/** Who acted: an API key or a signed-in user (their ids), the operator's CLI, or the platform itself. */
export type AuditActor =
  { type: 'api_key'; id: string | null } | { type: 'user'; id: string } | { type: 'operator' } | { type: 'system' };

export interface AuditEntry {
  actor: AuditActor;
  /** A stable dotted name: `contacts.imported`. */
  action: string;
  /** The row acted on. */
  subject?: { type: string; id: string };
  /** What the action did. */
  data?: Record<string, unknown>;
}

export interface AuditRow {
  id: string;
  team_id: string;
  actor_type: AuditActor['type'];
  actor_id: string | null;
  action: string;
  subject_type: string | null;
  subject_id: string | null;
  data: Record<string, unknown>;
  created_at: Date;
}

/** Appends one entry to the team's trail, in the caller's transaction. */
export async function recordAudit(db: Knex, teamId: string, entry: AuditEntry): Promise<string> {
  const id = newId();
  await db('audit_log').insert({
    id,
    team_id: teamId,
    actor_type: entry.actor.type,
    actor_id: 'id' in entry.actor ? entry.actor.id : null,
    action: entry.action,
    subject_type: entry.subject?.type ?? null,
    subject_id: entry.subject?.id ?? null,
    data: JSON.stringify(entry.data ?? {}),
  });
  return id;
}

/** A page of the team's trail, newest first; only `action`'s entries when it is given. */
export function listAudit(db: Knex, teamId: string, page: ListQuery & { action?: string }) {
  const query = db('audit_log').where({ team_id: teamId });
  if (page.action) query.where({ action: page.action });
  return paginate<AuditRow>(query, page);
}
