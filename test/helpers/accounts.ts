// The accounts world: the mta world (platform, loopback DNS, SMTP sink) with PLATFORM_FROM set, the platform team's
// sending domain verified and its DKIM key published, the recipients' domain `people.test` routed to the sink, and
// the real mta process delivering what the api accepts. Account mails are read from the sink as a person reads
// them. A cookie client signs in as a browser does: a cookie jar, an Origin of the site and the CSRF header on
// writes.
import { simpleParser } from 'mailparser';
import { startMtaWorld, type MtaWorld } from './mta.ts';
import { startEntry, type EntryProcess } from './processes.ts';
import { requestAt, type RequestOptions, type TestResponse } from './request.ts';
import { until } from './wait.ts';
import { ensurePlatformSender } from '../../shared/accounts/platform-sender.ts';
import { secretsKey } from '../../shared/secrets.ts';
import type { Knex } from 'knex';
import { signUp, verifyEmail } from '../../shared/accounts/signup.ts';
import { LINK_PAGES } from '../../shared/accounts/messages.ts';

export const PLATFORM_DOMAIN = 'platform-mail.test';
export const PEOPLE = 'people.test';

export interface AccountsWorld {
  w: MtaWorld;
  mta: EntryProcess;
  /** The text of the `nth` (1-based) account mail to `address`, once the mta delivered it to the sink. */
  mailTo(address: string, nth?: number, timeoutMs?: number): Promise<{ subject: string; text: string }>;
  close(): Promise<void>;
}

export async function startAccountsWorld(env: Record<string, string> = {}): Promise<AccountsWorld> {
  const w = await startMtaWorld({ env: { PLATFORM_FROM: `Postwerk <accounts@${PLATFORM_DOMAIN}>`, ...env } });
  const sender = await ensurePlatformSender(w.p.db, w.p.config, {
    hosts: w.p.config,
    secrets: secretsKey(w.p.config),
    resolver: w.p.deps.dns,
    reservedAllowed: w.p.config.RESERVED_TLDS_ALLOWED,
  });
  if (!sender) throw new Error('no platform sender');
  // What the operator does once: publish the records (here: the DKIM key) and let the domain verify.
  await w.p.db('domains').where({ id: sender.domain.id }).update({ status: 'verified', verified_at: new Date() });
  const key = await w.p.db('dkim_keys').where({ domain_id: sender.domain.id }).first('selector', 'public_key');
  w.dns.set(`${key.selector}._domainkey.${PLATFORM_DOMAIN}`, 'TXT', [`v=DKIM1; k=rsa; p=${key.public_key}`]);
  w.mx(PEOPLE);
  const mta = startEntry('mta/main.ts', w.p.config, { SMTP_SUBMISSION_PORT: '0', SMTP_SUBMISSION_TLS_PORT: '0' });
  await mta.logged('mta.started', 120_000);
  return {
    w,
    mta,
    async mailTo(address, nth = 1, timeoutMs = 60_000) {
      await w.sink.waitFor(() => w.sink.deliveredTo(address).length >= nth, timeoutMs);
      const parsed = await simpleParser(w.sink.deliveredTo(address)[nth - 1].raw);
      return { subject: parsed.subject ?? '', text: parsed.text ?? '' };
    },
    async close() {
      await mta.stop();
      await w.close();
    },
  };
}

/** The token of the dashboard link of `what` (`/verify#token=<token>`, ...) in a mail's text. */
export function linkToken(text: string, what: keyof typeof LINK_PAGES): string {
  const m = new RegExp(`${LINK_PAGES[what]}#token=([A-Za-z0-9%_-]+)`).exec(text);
  if (!m) throw new Error(`no ${what} link in: ${text}`);
  return decodeURIComponent(m[1]);
}

/** A browser without a browser: cookies kept, an Origin of the site and the CSRF header sent on every write. */
export class CookieClient {
  readonly jar = new Map<string, string>();
  constructor(
    readonly url: string,
    readonly origin: string | null = url,
  ) {}

  cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(
    method: string,
    path: string,
    o: RequestOptions & { csrf?: string | null } = {},
  ): Promise<TestResponse> {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (this.jar.size) headers.cookie = this.cookieHeader();
    if (method !== 'GET' && this.origin) headers.origin ??= this.origin;
    const csrf = o.csrf === undefined ? this.jar.get('postwerk_csrf') : o.csrf;
    if (method !== 'GET' && csrf) headers['x-csrf-token'] ??= csrf;
    const res = await requestAt(this.url, method, path, { ...o, headers });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const [name, value] = [pair.slice(0, eq), pair.slice(eq + 1)];
      if (/Max-Age=0/.test(line)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return res;
  }
}

/** Signs up, reads the verification mail, verifies: the address has an account with `password`. */
export async function signUpAndVerify(
  world: AccountsWorld,
  email: string,
  password = 'correct horse battery',
  name = 'Ann',
): Promise<string> {
  const c = new CookieClient(world.w.p.url);
  const before = world.w.sink.deliveredTo(email).length;
  const res = await c.request('POST', '/auth/signup', { body: { email, password, name } });
  if (res.status !== 200) throw new Error(`signup answered ${res.status} ${res.text}`);
  const mail = await world.mailTo(email, before + 1);
  const verified = await c.request('POST', '/auth/verify-email', { body: { token: linkToken(mail.text, 'verify') } });
  if (verified.status !== 200) throw new Error(`verify answered ${verified.status} ${verified.text}`);
  return verified.body.id;
}

/** A signed-in cookie client of an account without MFA. */
export async function signedIn(world: AccountsWorld, email: string, password = 'correct horse battery') {
  const c = new CookieClient(world.w.p.url);
  const res = await c.request('POST', '/auth/login', { body: { email, password } });
  if (res.status !== 200 || res.body.object !== 'session') throw new Error(`login answered ${res.status} ${res.text}`);
  return c;
}

export { until };

/**
 * An account made by the sign-up code itself (signUp, then verifyEmail with its token) without a mail: for tests of
 * what comes after the sign-up (sessions, MFA, teams). The sign-up and its mail are tested in accounts.test.ts.
 */
export async function makeUser(db: Knex, email: string, password = 'correct horse battery', name = 'Test') {
  const { token } = await signUp(db, { email, password, name });
  return verifyEmail(db, token);
}

/** A signed-in cookie client against `url`. */
export async function signIn(url: string, email: string, password = 'correct horse battery') {
  const c = new CookieClient(url);
  const res = await c.request('POST', '/auth/login', { body: { email, password } });
  if (res.status !== 200 || res.body.object !== 'session') throw new Error(`login answered ${res.status} ${res.text}`);
  return c;
}
