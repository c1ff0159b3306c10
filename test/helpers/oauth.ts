// An OAuth client without a browser, for the protocol's refusals: a cookie jar (the dashboard session's cookies and
// oidc-provider's), redirects not followed, PKCE made here, the consent page's API calls made as the page makes them.
// The browser path (the real consent page in Chromium, the SDK's client) is test/oauth-mcp-e2e.test.ts.
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { makeUser } from './accounts.ts';

export const REDIRECT = 'http://127.0.0.1:9/callback';

export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface Answer {
  status: number;
  location: string | null;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
  headers: Headers;
}

export class Agent {
  readonly jar = new Map<string, string>();
  constructor(readonly base: string) {}

  async go(
    method: string,
    url: string,
    o: { json?: unknown; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { 'user-agent': 'postwerk-tests/1.0', ...(o.headers ?? {}) };
    if (this.jar.size) headers.cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (o.json !== undefined) {
      body = JSON.stringify(o.json);
      headers['content-type'] = 'application/json';
    } else if (o.form) {
      body = new URLSearchParams(o.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    if (method !== 'GET') {
      headers.origin ??= this.base;
      const csrf = this.jar.get('postwerk_csrf');
      if (csrf) headers['x-csrf-token'] ??= csrf;
    }
    const res = await fetch(new URL(url, this.base), { method, headers, body, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const [name, value] = [pair.slice(0, eq), pair.slice(eq + 1)];
      if (/Max-Age=0|expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.jar.delete(name);
      else this.jar.set(name, value);
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, location: res.headers.get('location'), body: parsed, text, headers: res.headers };
  }
}

/** A team made by the signed-in person (they are its admin), made their current team. */
export async function createMembership(agent: Agent, name = 'Granting team'): Promise<string> {
  const res = await agent.go('POST', '/teams', { json: { name } });
  if (res.status !== 201) throw new Error(`create team: ${res.status} ${res.text}`);
  const sw = await agent.go('POST', `/teams/${res.body.id}/switch`, { json: {} });
  if (sw.status !== 200) throw new Error(`switch team: ${sw.status} ${sw.text}`);
  return res.body.id;
}

/** A verified person signed in (in the agent's jar) with a team of their own: returns the user and team ids. */
export async function signedInWithTeam(db: Knex, agent: Agent, email: string) {
  const user = await makeUser(db, email);
  const login = await agent.go('POST', '/auth/login', { json: { email, password: 'correct horse battery' } });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${login.text}`);
  const team = await createMembership(agent);
  return { userId: user.id as string, teamId: team };
}

export async function registerClient(base: string, meta: Record<string, unknown> = {}): Promise<Answer> {
  return new Agent(base).go('POST', '/oauth/reg', {
    json: {
      client_name: 'Test Assistant',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      ...meta,
    },
  });
}

export interface AuthorizeInput {
  clientId: string;
  scope: string;
  resource?: string;
  challenge?: string | null;
  method?: string;
  redirectUri?: string;
}

export function authorizeUrl(i: AuthorizeInput): string {
  const q = new URLSearchParams({
    client_id: i.clientId,
    response_type: 'code',
    redirect_uri: i.redirectUri ?? REDIRECT,
    scope: i.scope,
    state: 'st-' + randomBytes(4).toString('hex'),
  });
  if (i.resource) q.set('resource', i.resource);
  if (i.challenge !== null) {
    q.set('code_challenge', i.challenge ?? pkce().challenge);
    q.set('code_challenge_method', i.method ?? 'S256');
  }
  return `/oauth/auth?${q}`;
}

/** Follows redirects within the api (not to the client's redirect URI) until one leaves it or the page is reached. */
export async function follow(agent: Agent, first: Answer): Promise<Answer> {
  let res = first;
  for (let i = 0; i < 10 && res.location && new URL(res.location, agent.base).origin === agent.base; i++) {
    if (new URL(res.location, agent.base).pathname.startsWith('/oauth/consent/')) return res;
    res = await agent.go('GET', res.location);
  }
  return res;
}

/** The whole authorization as the consent page does it: the code at the redirect URI (or the answer that refused). */
export async function authorizeCode(agent: Agent, i: AuthorizeInput, approve = true) {
  const start = await follow(agent, await agent.go('GET', authorizeUrl(i)));
  if (!start.location?.includes('/oauth/consent/')) return { refused: start };
  const uid = new URL(start.location, agent.base).pathname.split('/').pop()!;
  const details = await agent.go('GET', `/oauth/consent/${uid}/details`);
  const decided = await agent.go('POST', `/oauth/consent/${uid}/${approve ? 'confirm' : 'deny'}`, { json: {} });
  if (decided.status !== 200) return { refused: decided, details };
  const back = await follow(agent, await agent.go('GET', decided.body.redirect_to));
  const to = new URL(back.location ?? 'http://none/', agent.base);
  return { details, uid, back, code: to.searchParams.get('code'), error: to.searchParams.get('error') };
}

export function tokenRequest(base: string, form: Record<string, string>): Promise<Answer> {
  return new Agent(base).go('POST', '/oauth/token', { form });
}

/**
 * A person with a team of their own grants a fresh client `scope` for `resource` (the API's by default): the
 * client, the flow's answers and the token endpoint's answer.
 */
export async function grantedToken(db: Knex, base: string, email: string, scope: string, resource = `${base}/`) {
  const agent = new Agent(base);
  const who = await signedInWithTeam(db, agent, email);
  const reg = await registerClient(base, { scope: `${scope} offline_access` });
  if (reg.status !== 201) throw new Error(`registration: ${reg.status} ${reg.text}`);
  const { verifier, challenge } = pkce();
  const asked = `${scope} offline_access`;
  const flow = await authorizeCode(agent, { clientId: reg.body.client_id, scope: asked, resource, challenge });
  if (!flow.code) throw new Error(`no code: ${JSON.stringify(flow)}`);
  const tokens = await tokenRequest(base, {
    grant_type: 'authorization_code',
    code: flow.code,
    redirect_uri: REDIRECT,
    client_id: reg.body.client_id,
    code_verifier: verifier,
    resource,
  });
  return { agent, who, client: reg.body, flow, tokens, verifier };
}
