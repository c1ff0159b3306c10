// The whole path as an AI assistant takes it: the MCP SDK's client (with its OAuth support) meets a 401 at /mcp,
// discovers the protected resource and authorization server metadata, registers itself (RFC 7591), and sends the
// person to authorize with PKCE; the person, signed in, allows it on the real consent page in headless Chromium; the
// client lists its tools (generated from the operation declarations), sends an email to the simulator through one
// and sees it delivered by the real mta; the grant is revoked on the dashboard's OAuth grants page, and the next
// call is refused. Pages checked by axe-core and photographed at 1280 and 390 pixels.
import test from 'ava';
import type { Browser } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { launchChromium, openPage, screenshotDir, DESKTOP } from './helpers/browser.ts';
import { buildDashboard, lookAt } from './helpers/dashboard.ts';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { freePort } from './helpers/ports.ts';
import { Agent, signedInWithTeam } from './helpers/oauth.ts';
import { until } from './helpers/wait.ts';

const CALLBACK = 'http://127.0.0.1:9/mcp-callback';

/** What an MCP host keeps for one server: its registration, PKCE verifier and tokens; the URL it would open. */
class HostStore implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  opened?: URL;
  get redirectUrl() {
    return CALLBACK;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Helpful Assistant',
      redirect_uris: [CALLBACK],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.opened = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

let w: MtaWorld;
let mta: EntryProcess;
let browser: Browser;
let base: string;

test.before(async () => {
  await buildDashboard();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  w = await startMtaWorld({ env: { PORT: String(port), PUBLIC_BASE_URL: base } });
  mta = startEntry('mta/main.ts', w.p.config, { SMTP_SUBMISSION_PORT: '0', SMTP_SUBMISSION_TLS_PORT: '0' });
  await mta.logged('mta.started', 120_000);
  browser = await launchChromium();
});

test.after.always(async () => {
  await browser?.close();
  await mta?.stop();
  await w?.close();
});

const connect = async (store: HostStore) => {
  const client = new Client({ name: 'e2e-host', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: store });
  await client.connect(transport);
  return { client, transport };
};

test('an MCP client authorizes through the consent page, sends to the simulator, and is cut off by a revocation', async (t) => {
  t.timeout(240_000);
  const agent = new Agent(base);
  const { teamId } = await signedInWithTeam(w.p.db, agent, 'mcp-owner@people.test');
  const shots = await screenshotDir('oauth');
  const store = new HostStore();

  // 1. No token: the SDK discovers, registers and asks to open the authorization URL.
  const first = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: store });
  await t.throwsAsync(new Client({ name: 'e2e-host', version: '1.0.0' }).connect(first));
  t.truthy(store.info?.client_id, 'registered dynamically');
  t.truthy(store.opened, 'an authorization URL to open');
  t.is(store.opened!.searchParams.get('code_challenge_method'), 'S256');
  t.is(store.opened!.searchParams.get('resource'), `${base}/mcp`);

  // 2. The person, signed in, allows it on the consent page.
  const visit = await openPage(browser, DESKTOP);
  await visit.context.addCookies(
    ['postwerk_session', 'postwerk_csrf'].map((name) => ({ name, value: agent.jar.get(name)!, url: base })),
  );
  let landed: string | undefined;
  await visit.page.route('http://127.0.0.1:9/**', (route) => {
    landed = route.request().url();
    return route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the host' });
  });
  await visit.page.goto(store.opened!.href);
  await visit.page.getByRole('button', { name: 'Allow access' }).waitFor();
  t.regex(await visit.page.locator('main').innerText(), /Helpful Assistant wants access to the team Granting team/);
  t.regex(await visit.page.locator('main').innerText(), /Send emails from your domains/);
  const consent = await lookAt(visit.page, shots, 'consent');
  t.deepEqual(consent.violations, []);
  t.true(consent.overflow <= 0, 'the consent page fits a phone');
  await visit.page.getByRole('button', { name: 'Allow access' }).click();
  await until(async () => landed !== undefined, { what: 'the browser back at the host' });
  const code = new URL(landed!).searchParams.get('code');
  t.truthy(code, `a code at the redirect URI (${landed})`);
  await first.finishAuth(code!);
  t.truthy(store.saved?.access_token);

  // 3. Tools, generated from the operations; a send through one reaches `delivered`.
  const { client } = await connect(store);
  const tools = (await client.listTools()).tools.map((tool) => tool.name);
  for (const name of ['sendEmail', 'listEmails', 'getEmail', 'listDomains']) t.true(tools.includes(name), name);
  // No tool for what no scope reaches (every tool and input: mcp-tools.test.ts).
  for (const name of ['createApiKey', 'revokeOAuthGrant', 'listOAuthGrants']) t.false(tools.includes(name), name);
  const domains = await client.callTool({ name: 'listDomains', arguments: {} });
  const managed = (domains.structuredContent as { data: { name: string; managed: boolean }[] }).data.find(
    (d) => d.managed,
  )!;
  const to = `delivered@${w.p.config.SIMULATOR_DOMAIN}`;
  const bad = await client.callTool({ name: 'sendEmail', arguments: { body: { to: [to] } } });
  t.true(bad.isError, 'input failing the schema is an error');
  t.like(bad.structuredContent, { statusCode: 422, name: 'missing_required_field' });
  const sent = await client.callTool({
    name: 'sendEmail',
    arguments: { body: { from: `assistant@${managed.name}`, to: [to], subject: 'From MCP', html: '<p>Hello</p>' } },
  });
  t.falsy(sent.isError, JSON.stringify(sent.structuredContent));
  const id = (sent.structuredContent as { id: string }).id;
  let last: unknown;
  await until(
    async () => {
      const got = await client.callTool({ name: 'getEmail', arguments: { path: { email_id: id } } });
      last = got.structuredContent;
      return (got.structuredContent as { last_event?: string }).last_event === 'delivered';
    },
    { what: 'the email delivered', timeoutMs: 60_000 },
  ).catch((err) => {
    throw new Error(`${err.message}: ${JSON.stringify(last)}`);
  });
  const row = await w.p.db('emails').where({ id }).first('team_id');
  t.is(row.team_id, teamId, 'sent as the granted team');

  // 4. Revoked on the dashboard's OAuth grants page: the next call is refused.
  await visit.page.goto(`${base}/dashboard/settings/oauth-grants`);
  await visit.page.getByRole('button', { name: 'Revoke Helpful Assistant' }).waitFor();
  const grants = await lookAt(visit.page, shots, 'grants');
  t.deepEqual(grants.violations, []);
  await visit.page.getByRole('button', { name: 'Revoke Helpful Assistant' }).click();
  await visit.page.getByText(/Revoked .*revoked by team/).waitFor();
  await lookAt(visit.page, shots, 'grants-revoked');
  await t.throwsAsync(client.callTool({ name: 'listEmails', arguments: {} }));
  const direct = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${store.saved!.access_token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'user-agent': 't',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  t.is(direct.status, 401);
  t.regex(direct.headers.get('www-authenticate') ?? '', /invalid_token.*resource_metadata=/);
  await visit.context.close();
});
