// Attachments as the tests send and fetch them: small files, a send carrying them, and download links followed on
// the test server (the platform's PUBLIC_BASE_URL, named in every link, is not where it listens).
import { managedDomain, type Platform, type TestTeam } from './platform.ts';

export const BASE = 'https://mail.example-platform.test';
export const PNG = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13]);
export const PDF = Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\n%%EOF\n', 'latin1');

/** The path and query of a link (the test server does not listen at PUBLIC_BASE_URL). */
export const local = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

export interface Part {
  filename?: string;
  content: Buffer;
  content_type?: string;
  content_id?: string;
}

/** A scheduled send from the team's managed domain to the simulator with these attachments; answers its id. */
export async function sendWith(p: Platform, team: TestTeam, parts: Part[]): Promise<string> {
  const managed = (await managedDomain(p, team)).name;
  const res = await p.request('POST', '/emails', {
    key: team.key,
    body: {
      from: `files@${managed}`,
      to: `delivered@${p.config.SIMULATOR_DOMAIN}`,
      subject: 'files',
      text: 'see attached',
      scheduled_at: 'in 1 hour',
      attachments: parts.map((a) => ({ ...a, content: a.content.toString('base64') })),
    },
  });
  if (res.status !== 200) throw new Error(`send failed: ${res.status} ${res.text}`);
  return res.body.id;
}
