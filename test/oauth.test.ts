// The authorization server through its protocol (oidc-provider behind /oauth) and OAuth access tokens on the API:
// registration, authorization code + PKCE through the consent page's API calls, refresh rotation, revocation, and
// the refusals the issue lists. The browser and MCP path: oauth-mcp-e2e.test.ts.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { freePort } from './helpers/ports.ts';
import {
  Agent,
  authorizeCode,
  pkce,
  REDIRECT,
  registerClient,
  signedInWithTeam,
  tokenRequest,
} from './helpers/oauth.ts';

let p: Platform;
let base: string;

test.before(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  p = await startPlatform({ PORT: String(port), PUBLIC_BASE_URL: base, OAUTH_REGISTRATIONS_PER_HOUR: '1000' });
});

test.after.always(async () => {
  await p?.close();
});

async function granted(email: string, scope: string, resource = `${base}/`) {
  const agent = new Agent(base);
  const who = await signedInWithTeam(p.db, agent, email);
  const reg = await registerClient(base, { scope: `${scope} offline_access` });
  if (reg.status !== 201) throw new Error(`registration: ${reg.status} ${reg.text}`);
  const { verifier, challenge } = pkce();
  const flow = await authorizeCode(agent, {
    clientId: reg.body.client_id,
    scope: `${scope} offline_access`,
    resource,
    challenge,
  });
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

test('metadata (RFC 8414) names the endpoints, PKCE S256 only, registration and revocation', async (t) => {
  const res = await p.request('GET', '/.well-known/oauth-authorization-server');
  t.is(res.status, 200, res.text);
  t.is(res.body.issuer, base);
  t.is(res.body.token_endpoint, `${base}/oauth/token`);
  t.is(res.body.registration_endpoint, `${base}/oauth/reg`);
  t.is(res.body.revocation_endpoint, `${base}/oauth/token/revocation`);
  t.deepEqual(res.body.code_challenge_methods_supported, ['S256']);
  t.true(res.body.scopes_supported.includes('emails:send'));
  t.true(res.body.scopes_supported.includes('billing:read'));
});

test('code + PKCE through consent: a token reaches operations of its scopes, not others', async (t) => {
  const { tokens, flow, who } = await granted('grant-one@people.test', 'domains:read emails:read');
  t.is(tokens.status, 200, tokens.text);
  t.truthy(tokens.body.refresh_token);
  t.is(flow.details!.body.team.id, who.teamId);
  t.deepEqual(
    flow.details!.body.scopes.map((s: { scope: string }) => s.scope),
    ['domains:read', 'emails:read'],
  );
  const token = tokens.body.access_token;
  const domains = await p.request('GET', '/domains', { key: token });
  t.is(domains.status, 200, domains.text);
  const keys = await p.request('GET', '/api-keys', { key: token });
  t.is(keys.status, 403);
  t.is(keys.body.name, 'invalid_permission');
  const grants = await p.request('GET', '/oauth/grants', { key: token });
  t.is(grants.status, 403);
  t.is(grants.body.name, 'invalid_permission');
});
