// The authorization server through its protocol (oidc-provider behind /oauth) and OAuth access tokens on the API:
// registration, authorization code + PKCE through the consent page's API calls, refresh rotation, revocation, and
// the refusals the issue lists; no token creates an API key; the signing keys sealed in PostgreSQL across a restart.
// The browser and MCP path: oauth-mcp-e2e.test.ts; the MCP tools: mcp-tools.test.ts.
import test from 'ava';
import { Resend } from 'resend';
import { createPublicKey, verify } from 'node:crypto';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { freePort } from './helpers/ports.ts';
import { serve } from './helpers/http.ts';
import { createApp } from '../api/app.ts';
import type { ApiDeps } from '../api/deps.ts';
import type Provider from 'oidc-provider';
import { open, secretsKey } from '../shared/secrets.ts';
import { requestReset } from '../shared/accounts/reset.ts';
import {
  Agent,
  authorizeCode,
  grantedToken,
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

const granted = (email: string, scope: string, resource = `${base}/`) =>
  grantedToken(p.db, base, email, scope, resource);

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

test('registration refuses redirect URIs of other schemes; authorize refuses one differing by a character', async (t) => {
  for (const uri of ['javascript:alert(1)', 'ftp://127.0.0.1/cb', 'data:text/html,x']) {
    const reg = await registerClient(base, { redirect_uris: [uri] });
    t.is(reg.status, 400, `${uri}: ${reg.text}`);
    t.regex(reg.body.error, /invalid_redirect_uri|invalid_client_metadata/);
  }
  const agent = new Agent(base);
  await signedInWithTeam(p.db, agent, 'redirect@people.test');
  const reg = await registerClient(base);
  const flow = await authorizeCode(agent, {
    clientId: reg.body.client_id,
    scope: 'domains:read',
    redirectUri: REDIRECT.replace('callback', 'callbacK'),
  });
  t.is(flow.refused?.status, 400);
  t.is(flow.refused?.body.error, 'invalid_redirect_uri');
  t.is((await p.db('oauth_grants').where({ client_id: reg.body.client_id })).length, 0);
});

test('PKCE is required and only S256: missing or plain is refused at the redirect URI, nothing granted', async (t) => {
  const agent = new Agent(base);
  await signedInWithTeam(p.db, agent, 'pkce@people.test');
  const reg = await registerClient(base);
  for (const [label, extra] of [
    ['missing', { challenge: null }],
    ['plain', { challenge: 'a'.repeat(43), method: 'plain' }],
  ] as const) {
    const flow = await authorizeCode(agent, { clientId: reg.body.client_id, scope: 'domains:read', ...extra });
    const to = new URL(flow.refused?.location ?? 'http://none/');
    t.is(`${to.origin}${to.pathname}`, REDIRECT, `${label}: back to the client`);
    t.is(to.searchParams.get('error'), 'invalid_request', label);
  }
  t.is((await p.db('oauth_grants').where({ client_id: reg.body.client_id })).length, 0);
});

test('scopes beyond the registration and an unknown resource are refused', async (t) => {
  const agent = new Agent(base);
  await signedInWithTeam(p.db, agent, 'beyond@people.test');
  const reg = await registerClient(base, { scope: 'domains:read' });
  const beyond = await authorizeCode(agent, { clientId: reg.body.client_id, scope: 'domains:read emails:send' });
  t.is(new URL(beyond.refused!.location!).searchParams.get('error'), 'invalid_scope');
  const other = await authorizeCode(agent, {
    clientId: reg.body.client_id,
    scope: 'domains:read',
    resource: 'https://elsewhere.test/',
  });
  t.is(new URL(other.refused!.location!).searchParams.get('error'), 'invalid_target');
});

test('a replayed code revokes the grant: the first exchange’s tokens stop working', async (t) => {
  const { tokens, flow, client, verifier } = await granted('replay-code@people.test', 'domains:read');
  const again = await tokenRequest(base, {
    grant_type: 'authorization_code',
    code: flow.code!,
    redirect_uri: REDIRECT,
    client_id: client.client_id,
    code_verifier: verifier,
  });
  t.is(again.status, 400);
  t.is(again.body.error, 'invalid_grant');
  const res = await p.request('GET', '/domains', { key: tokens.body.access_token });
  t.is(res.status, 403);
  t.is(res.body.name, 'invalid_api_key');
  const row = await p.db('oauth_grants').where({ client_id: client.client_id }).first();
  t.is(row.revoked_reason, 'authorization_code_replayed');
});

test('refresh tokens rotate; a replayed one revokes the whole grant', async (t) => {
  const { tokens, client } = await granted('replay-refresh@people.test', 'domains:read');
  const refresh = (token: string) =>
    tokenRequest(base, { grant_type: 'refresh_token', refresh_token: token, client_id: client.client_id });
  const rotated = await refresh(tokens.body.refresh_token);
  t.is(rotated.status, 200, rotated.text);
  t.not(rotated.body.refresh_token, tokens.body.refresh_token);
  t.is((await p.request('GET', '/domains', { key: rotated.body.access_token })).status, 200);
  const replay = await refresh(tokens.body.refresh_token);
  t.is(replay.body.error, 'invalid_grant');
  t.is((await refresh(rotated.body.refresh_token)).body.error, 'invalid_grant', 'the new one died with the grant');
  const after = await p.request('GET', '/domains', { key: rotated.body.access_token });
  t.is(after.body.name, 'invalid_api_key');
  const row = await p.db('oauth_grants').where({ client_id: client.client_id }).first();
  t.is(row.revoked_reason, 'refresh_token_replayed');
});

test('a token for /mcp is refused by the API, an API token and an API key by /mcp; expired tokens too', async (t) => {
  const mcp = await granted('resource@people.test', 'domains:read', `${base}/mcp`);
  t.is(mcp.tokens.status, 200, mcp.tokens.text);
  const onApi = await p.request('GET', '/domains', { key: mcp.tokens.body.access_token });
  t.is(onApi.status, 403);
  t.regex(onApi.body.message, /another resource/);
  const apiToken = await granted('resource2@people.test', 'domains:read');
  const team = await p.createTeam();
  for (const [label, token] of [
    ['API token', apiToken.tokens.body.access_token],
    ['API key', team.key],
  ]) {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'user-agent': 't' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    t.is(res.status, 401, label);
    t.regex(res.headers.get('www-authenticate') ?? '', /error="invalid_token".*resource_metadata="[^"]+\/mcp"/);
  }
  const none = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'user-agent': 't' } });
  t.is(none.status, 401);
  const prm = await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json();
  t.is(prm.resource, `${base}/mcp`);
  t.deepEqual(prm.authorization_servers, [base]);
  // Expired: its row says so (the provider refuses it, whatever the cache knew a second ago).
  const fresh = await granted('expired@people.test', 'domains:read');
  await p
    .db('oauth_models')
    .where({ model: 'AccessToken', id: fresh.tokens.body.access_token })
    .update({
      payload: p.db.raw(`jsonb_set(payload, '{exp}', to_jsonb(extract(epoch from now())::int - 10))`),
    });
  const expired = await p.request('GET', '/domains', { key: fresh.tokens.body.access_token });
  t.is(expired.body.name, 'invalid_api_key');
});

test('revoking a grant (DELETE /oauth/grants/{id}) kills its tokens at once; another team sees none of it', async (t) => {
  const { tokens, who, agent } = await granted('revoke@people.test', 'domains:read');
  const list = await agent.go('GET', '/oauth/grants');
  t.is(list.status, 200, list.text);
  t.like(list.body.data[0], {
    object: 'oauth_grant',
    scopes: ['domains:read'],
    revoked_at: null,
    client: { name: 'Test Assistant' },
  });
  const id = list.body.data[0].id;
  const other = await p.createTeam();
  t.is((await p.request('DELETE', `/oauth/grants/${id}`, { key: other.key })).status, 404);
  t.is((await p.request('GET', '/oauth/grants', { key: other.key })).body.data.length, 0);
  t.is((await p.request('GET', '/domains', { key: tokens.body.access_token })).status, 200);
  const revoked = await agent.go('DELETE', `/oauth/grants/${id}`);
  t.is(revoked.status, 200, revoked.text);
  t.like(revoked.body, { object: 'oauth_grant', id, revoked_reason: 'revoked_by_team' });
  t.is((await p.request('GET', '/domains', { key: tokens.body.access_token })).body.name, 'invalid_api_key');
  const refreshed = await tokenRequest(base, {
    grant_type: 'refresh_token',
    refresh_token: tokens.body.refresh_token,
    client_id: (await p.db('oauth_grants').where({ id }).first()).client_id,
  });
  t.is(refreshed.body.error, 'invalid_grant');
  t.is(who.teamId, (await p.db('oauth_grants').where({ id }).first()).team_id);
});

test('a password reset revokes every grant the person made: its tokens stop, the grant says why', async (t) => {
  const email = 'reset-grants@people.test';
  const { tokens, client } = await granted(email, 'domains:read');
  const other = await granted('someone-else@people.test', 'domains:read');
  t.is((await p.request('GET', '/domains', { key: tokens.body.access_token })).status, 200);
  const { token } = await requestReset(p.db, email);
  const reset = await p.request('POST', '/auth/password-reset/confirm', {
    body: { token, password: 'a new password here' },
  });
  t.is(reset.status, 200, JSON.stringify(reset.body));
  t.is((await p.request('GET', '/domains', { key: tokens.body.access_token })).body.name, 'invalid_api_key');
  const refreshed = await tokenRequest(base, {
    grant_type: 'refresh_token',
    refresh_token: tokens.body.refresh_token,
    client_id: client.client_id,
  });
  t.is(refreshed.body.error, 'invalid_grant');
  const row = await p.db('oauth_grants').where({ client_id: client.client_id }).first();
  t.is(row.revoked_reason, 'password_reset');
  // Another person's grant is theirs: untouched.
  t.is((await p.request('GET', '/domains', { key: other.tokens.body.access_token })).status, 200);
});

test('the revocation endpoint (RFC 7009) revokes an access token', async (t) => {
  const { tokens, client } = await granted('rfc7009@people.test', 'domains:read');
  const res = await new Agent(base).go('POST', '/oauth/token/revocation', {
    form: { token: tokens.body.access_token, client_id: client.client_id },
  });
  t.is(res.status, 200, res.text);
  t.is((await p.request('GET', '/domains', { key: tokens.body.access_token })).body.name, 'invalid_api_key');
});

test('a registration flood is rate limited per address (429 in the OAuth error shape)', async (t) => {
  const q = await startPlatform({ OAUTH_REGISTRATIONS_PER_HOUR: '3' });
  try {
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await registerClient(q.url));
    t.deepEqual(
      answers.map((a) => a.status),
      [201, 201, 201, 429, 429],
    );
    t.is(answers[4].body.error, 'rate_limit_exceeded');
    t.truthy(answers[4].headers.get('retry-after'));
  } finally {
    await q.close();
  }
});

test('no OAuth token creates an API key, whatever its scopes: 403 invalid_permission, nothing made', async (t) => {
  // A key would outlive the grant and its revocation, with full_access beyond the grant's scopes (docs/oauth.md).
  const { tokens, agent, who } = await granted('mint@people.test', 'api-keys:read api-keys:write');
  t.is(tokens.status, 200, tokens.text);
  const token = tokens.body.access_token;
  const keysOf = () => p.db('api_keys').where({ team_id: who.teamId }).select('id');
  const before = await keysOf();
  for (const permission of ['full_access', 'sending_access']) {
    const made = await p.request('POST', '/api-keys', { key: token, body: { name: 'outlives', permission } });
    t.is(made.status, 403, made.text);
    t.is(made.body.name, 'invalid_permission');
    t.regex(made.body.message, /cannot create API keys: a key would outlive the grant/);
  }
  t.deepEqual(await keysOf(), before, 'no key was made');
  // The rest of the area still answers the token's scopes: the admin's own key is listed, renamed and revoked.
  const own = await agent.go('POST', '/api-keys', { json: { name: 'made by the admin' } });
  t.is(own.status, 201, own.text);
  t.is((await p.request('GET', '/api-keys', { key: token })).status, 200);
  const renamed = await p.request('PATCH', `/api-keys/${own.body.id}`, { key: token, body: { name: 'renamed' } });
  t.is(renamed.status, 200, renamed.text);
  t.is((await p.request('DELETE', `/api-keys/${own.body.id}`, { key: token })).status, 200);
});

/**
 * An ID token for `sub` signed by the provider with its signing key: its own code path for them (no client is granted
 * `openid`, so no flow issues one; the access tokens are opaque). Its expiry given: the default prints a notice.
 */
async function idToken(provider: Provider, clientId: string, sub: string): Promise<string> {
  const token = new provider.IdToken({ sub }, { client: (await provider.Client.find(clientId))! });
  token.set('sub', sub);
  return token.issue({ use: 'idtoken', expiresAt: Math.floor(Date.now() / 1000) + 60 });
}

/** An RS256 JWT's signature checked against a published JWKS, by its kid. */
function signedBy(jwt: string, jwks: { keys: { kid: string }[] }): boolean {
  const [header, payload, signature] = jwt.split('.');
  const { kid, alg } = JSON.parse(Buffer.from(header, 'base64url').toString());
  const jwk = jwks.keys.find((k) => k.kid === kid);
  if (alg !== 'RS256' || !jwk) return false;
  const key = createPublicKey({ key: jwk as never, format: 'jwk' });
  return verify('sha256', Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, 'base64url'));
}

test('the signing key is sealed in PostgreSQL; after a restart the provider reads it, signs and verifies with it', async (t) => {
  const { tokens, client } = await granted('sealed@people.test', 'domains:read');
  t.is(tokens.status, 200, tokens.text);
  const rows = await p.db('oauth_signing_keys').select('kid', 'jwk_sealed');
  t.is(rows.length, 1);
  const [{ kid, jwk_sealed: sealed }] = rows;
  // The row holds AES-GCM's output (v1.<iv>.<tag>.<ciphertext>): no part of the key, in the text or its decoding.
  t.regex(sealed, /^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
  const clear = JSON.parse(open(secretsKey(p.config), sealed));
  t.is(clear.kid, kid);
  t.truthy(clear.d, 'a private key was sealed');
  const decoded = sealed
    .split('.')
    .map((part: string) => Buffer.from(part, 'base64url').toString('latin1'))
    .join(' ');
  for (const where of [sealed, decoded]) {
    for (const name of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'n']) t.false(where.includes(clear[name]), `${name} in clear`);
    t.false(/"kty"|"RSA"|PRIVATE KEY/.test(where));
  }
  const published = (await p.request('GET', '/oauth/jwks')).body;
  t.deepEqual(
    published.keys.map((k: { kid: string }) => k.kid),
    [kid],
  );
  t.false('d' in published.keys[0], 'the JWKS publishes the public key only');
  const before = await p.deps.oauth!.provider();
  const signedBefore = await idToken(before, client.client_id, 'sealed');
  t.true(signedBy(signedBefore, published));

  // A restart: a new app on the same database, its provider made afresh, reading the sealed key.
  const restarted: ApiDeps = { ...p.deps, oauth: undefined };
  const again = await serve(createApp(restarted));
  try {
    const provider = await restarted.oauth!.provider();
    t.not(provider, before);
    t.is(Number((await p.db('oauth_signing_keys').count({ n: '*' }))[0].n), 1, 'no new key was made');
    t.deepEqual((await again.request('GET', '/oauth/jwks')).body, published);
    const known = await provider.Client.find(client.client_id);
    const claims = await provider.IdToken.validate(signedBefore, known!);
    t.is(claims.payload.sub, 'sealed', 'what was signed before the restart verifies after it');
    const signedAfter = await idToken(provider, client.client_id, 'after');
    t.true(signedBy(signedAfter, published), 'signed after the restart with the published key');
    // Tokens made before the restart still work, and the restarted provider issues new ones.
    t.is((await again.request('GET', '/domains', { key: tokens.body.access_token })).status, 200);
    const refreshed = await tokenRequest(again.url, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      client_id: client.client_id,
    });
    t.is(refreshed.status, 200, refreshed.text);
  } finally {
    await again.close();
    await restarted.oauth?.close();
  }
});

test("the official SDK's oauthGrants with a team's key: list, then revoke, and the token stops", async (t) => {
  const { tokens, agent } = await grantedToken(p.db, base, 'sdk-grants@people.test', 'domains:read');
  const key = await agent.go('POST', '/api-keys', { json: { name: 'sdk' } });
  t.is(key.status, 201, key.text);
  const resend = new Resend(key.body.token, { baseUrl: base } as never);
  const listed = await resend.oauthGrants.list();
  t.is(listed.error, null, JSON.stringify(listed.error));
  const [grant] = listed.data!.data;
  t.like(grant, { scopes: ['domains:read'], revoked_at: null });
  const revoked = await resend.oauthGrants.revoke(grant.id);
  t.is(revoked.error, null, JSON.stringify(revoked.error));
  t.is((await p.request('GET', '/domains', { key: tokens.body.access_token })).body.name, 'invalid_api_key');
  t.truthy((await resend.oauthGrants.list()).data?.data[0].revoked_at);
});
