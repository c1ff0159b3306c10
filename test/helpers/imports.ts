// What the contact import tests share: a CSV posted as a multipart form over real HTTP (as the SDK and curl send
// it), and waiting for an import to finish through GET /contacts/imports/{id}.
import type { Platform, TestResponse, TestTeam } from './platform.ts';
import { parseJson } from './request.ts';
import { until } from './wait.ts';

export interface UploadFields {
  column_map?: unknown;
  on_conflict?: string;
  segments?: unknown;
  topics?: unknown;
}

/** The form as the SDK builds it: the file first, then each field as text (JSON for the structured ones). */
export function importForm(csv: string | Buffer, fields: UploadFields = {}, filename = 'contacts.csv'): FormData {
  const form = new FormData();
  form.append('file', new Blob([csv as BlobPart]), filename);
  for (const [name, value] of Object.entries(fields))
    if (value !== undefined) form.append(name, typeof value === 'string' ? value : JSON.stringify(value));
  return form;
}

export async function postForm(
  p: Platform,
  key: string,
  form: FormData | Buffer,
  type?: string,
): Promise<TestResponse> {
  const headers: Record<string, string> = { 'user-agent': 'postwerk-tests/1.0', authorization: `Bearer ${key}` };
  if (type) headers['content-type'] = type;
  const res = await fetch(`${p.url}/contacts/imports`, { method: 'POST', headers, body: form as BodyInit });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: parseJson(text), text };
}

export async function upload(p: Platform, team: TestTeam, csv: string | Buffer, fields: UploadFields = {}) {
  return postForm(p, team.key, importForm(csv, fields));
}

/** Uploads and expects 201; answers the import's id. */
export async function startImport(p: Platform, team: TestTeam, csv: string | Buffer, fields: UploadFields = {}) {
  const res = await upload(p, team, csv, fields);
  if (res.status !== 201) throw new Error(`POST /contacts/imports answered ${res.status} ${res.text}`);
  return res.body.id as string;
}

/** The import once it is completed or failed. */
export async function finished(p: Platform, team: TestTeam, id: string, timeoutMs = 60_000) {
  return until(
    async () => {
      const res = await p.request('GET', `/contacts/imports/${id}`, { key: team.key });
      return res.body?.status === 'completed' || res.body?.status === 'failed' ? res.body : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `import ${id} finished` },
  );
}

/** An import to its end: the import and its kept failures. */
export async function imported(p: Platform, team: TestTeam, csv: string | Buffer, fields: UploadFields = {}) {
  const id = await startImport(p, team, csv, fields);
  const result = await finished(p, team, id);
  const failures = (await p.request('GET', `/contacts/imports/${id}/failures`, { key: team.key })).body;
  return { id, result, failures };
}

/** The team's contacts by address (lower case), straight from the database. */
export async function contactsOf(p: Platform, teamId: string) {
  const rows: {
    email: string;
    first_name: string | null;
    last_name: string | null;
    unsubscribed: boolean;
    never_subscribed: boolean;
    properties: Record<string, unknown>;
  }[] = await p
    .db('contacts')
    .where({ team_id: teamId })
    .select('email', 'first_name', 'last_name', 'unsubscribed', 'never_subscribed', 'properties');
  return new Map(rows.map((r) => [r.email.toLowerCase(), r]));
}
