// The MCP server's "what happened to this email" resource and the request logs of MCP calls, through the MCP SDK's
// own client over an OAuth access token (granted through the consent page's API calls, test/helpers/oauth.ts): the
// resource template is listed; reading it after a send to the simulator (delivered and bounced, through the mta's
// deliver job) answers one Markdown document of the status, events, recipients and attempts; another team's email
// and a token without `emails:read` are refused. Every tool call and read is a row of GET /logs (read here through
// the listLogs tool) under the token's grant, with its status and duration.
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startMtaWorld, type MtaWorld } from './helpers/mta.ts';
import { freePort } from './helpers/ports.ts';
import { grantedToken } from './helpers/oauth.ts';
import { processDelivery } from '../mta/delivery/job.ts';

let w: MtaWorld;
let base: string;

test.before(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  w = await startMtaWorld({ env: { PORT: String(port), PUBLIC_BASE_URL: base, OAUTH_REGISTRATIONS_PER_HOUR: '1000' } });
});
test.after.always(async () => {
  await w?.close();
});

/** A person with a team of their own grants an MCP client `scope`: the SDK's client, connected with the token. */
async function mcpClient(email: string, scope: string) {
  const granted = await grantedToken(w.p.db, base, email, scope, `${base}/mcp`);
  if (granted.tokens.status !== 200) throw new Error(`token: ${granted.tokens.text}`);
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${granted.tokens.body.access_token}`, 'user-agent': 'mcp-t/1' } },
  });
  const client = new Client({ name: 'story-host', version: '1.0.0' });
  await client.connect(transport);
  const grant = await w.p.db('oauth_grants').where({ team_id: granted.who.teamId }).first('id');
  return { client, teamId: granted.who.teamId, grantId: grant.id as string };
}

const storyUri = (id: string) => `postwerk://emails/${id}/story`;

test('an email story through the MCP client: status, events, recipients, attempts; team-scoped; logged calls', async (t) => {
  t.timeout(180_000);
  const { client, teamId, grantId } = await mcpClient(
    'story@people.test',
    'domains:read emails:send emails:read logs:read',
  );
  const templates = await client.listResourceTemplates();
  t.like(templates.resourceTemplates[0], {
    uriTemplate: 'postwerk://emails/{email_id}/story',
    mimeType: 'text/markdown',
  });

  const domains = await client.callTool({ name: 'listDomains', arguments: {} });
  const managed = (domains.structuredContent as { data: { name: string; managed: boolean }[] }).data.find(
    (d) => d.managed,
  )!;
  const sim = (local: string) => `${local}@${w.p.config.SIMULATOR_DOMAIN}`;
  const bad = await client.callTool({ name: 'sendEmail', arguments: { body: { to: [sim('delivered')] } } });
  t.true(bad.isError);
  const sent = await client.callTool({
    name: 'sendEmail',
    arguments: {
      body: {
        from: `assistant@${managed.name}`,
        to: [sim('delivered')],
        cc: [sim('bounced')],
        subject: 'Story | of a send',
        text: 'Hello',
      },
    },
  });
  t.falsy(sent.isError, JSON.stringify(sent.structuredContent));
  const id = (sent.structuredContent as { id: string }).id;
  await processDelivery(w.deps, id);

  const read = await client.readResource({ uri: storyUri(id) });
  t.is(read.contents.length, 1);
  t.is(read.contents[0].mimeType, 'text/markdown');
  const story = String((read.contents[0] as { text: string }).text);
  t.true(story.startsWith(`# Email ${id}\n`), story);
  t.regex(story, /^- Subject: Story \| of a send$/m);
  t.regex(story, /- Status: done; last event: (delivered|bounced)/);
  t.regex(story, new RegExp(`\\| ${sim('delivered')} \\| to \\| delivered \\|`));
  t.regex(story, new RegExp(`\\| ${sim('bounced')} \\| cc \\| bounced \\|`));
  // The events in the order they happened: sent first, then each recipient's outcome with its reason.
  const events = [...story.matchAll(/^\| \S+ \| (email\.[a-z_]+) \|/gm)].map((m) => m[1]);
  t.is(events[0], 'email.sent');
  t.true(events.includes('email.delivered') && events.includes('email.bounced'), events.join());
  t.regex(story, new RegExp(`\\| email\\.bounced \\| ${sim('bounced')} \\| Permanent`));
  t.regex(story, new RegExp(`\\| email\\.delivered \\| ${sim('delivered')} \\|`));
  t.regex(story, /## Delivery attempts/);

  // Not found: an unknown id, and another team's email read with its own token.
  await t.throwsAsync(client.readResource({ uri: storyUri('00000000-0000-4000-8000-000000000000') }), {
    message: /not found/i,
  });
  await t.throwsAsync(client.readResource({ uri: 'postwerk://emails/nope/story' }), { message: /Unknown resource/ });
  const other = await mcpClient('story-other@people.test', 'emails:read');
  await t.throwsAsync(other.client.readResource({ uri: storyUri(id) }), { message: /not found/i });
  t.not(other.teamId, teamId);
  // A token without emails:read cannot read a story.
  const narrow = await mcpClient('story-narrow@people.test', 'domains:read');
  await t.throwsAsync(narrow.client.readResource({ uri: storyUri(id) }), { message: /emails:read/ });

  // The calls above are request logs of the team, under the grant.
  const logs = await client.callTool({ name: 'listLogs', arguments: { query: { limit: '50' } } });
  t.falsy(logs.isError, JSON.stringify(logs.structuredContent));
  type Log = { id: string; endpoint: string; response_status: number; oauth_grant_id: string; duration_ms: number };
  const rows = (logs.structuredContent as { data: Log[] }).data;
  const at = (endpoint: string) => rows.filter((r) => r.endpoint === endpoint).map((r) => r.response_status);
  t.deepEqual(at('/mcp/tools/sendEmail').sort(), [200, 422]);
  t.deepEqual(at('/mcp/tools/listDomains'), [200]);
  t.deepEqual(at('/mcp/resources/email-story').sort(), [200, 400, 404]);
  t.true(rows.every((r) => r.oauth_grant_id === grantId && r.duration_ms >= 0));
  const one = rows.find((r) => r.endpoint === '/mcp/tools/sendEmail' && r.response_status === 200)!;
  const detail = await client.callTool({ name: 'getLog', arguments: { path: { id: one.id } } });
  t.like(detail.structuredContent, {
    method: 'POST',
    user_agent: 'mcp-t/1',
    request_body: { body: { subject: 'Story | of a send' } },
    response_body: { id },
  });
  // The other team's refused read is its own log, not this team's.
  const theirs = await w.p.db('request_logs').where({ team_id: other.teamId, endpoint: '/mcp/resources/email-story' });
  t.deepEqual(
    theirs.map((r) => r.response_status),
    [404],
  );
});
