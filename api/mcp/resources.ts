// The MCP server's one hand-written resource (docs/mcp.md): "what happened to this email", a resource template
// `postwerk://emails/{email_id}/story` whose read answers one Markdown document (shared/emails/story.ts) of the
// email's status, events, recipients and delivery attempts, for the token's team and only with `emails:read`. The
// tools already answer each of these alone; the story puts them in the order they happened, in one read.
import { ErrorCode, McpError, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { Knex } from 'knex';
import type { Auth } from '../routes/operation.ts';
import { loadStory, renderStory } from '../../shared/emails/story.ts';
import { ServiceError } from '../../shared/errors.ts';

export const STORY_SCOPE = 'emails:read';
const PREFIX = 'postwerk://emails/';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const storyTemplate = {
  uriTemplate: `${PREFIX}{email_id}/story`,
  name: 'email-story',
  title: 'What happened to this email',
  description:
    "One email's story in one document: its status, every event in order (sent, delivered, delayed, bounced, " +
    'opened, clicked...), each recipient with its state and last SMTP reply, and the delivery attempts. ' +
    `Needs the OAuth scope \`${STORY_SCOPE}\`.`,
  mimeType: 'text/markdown',
};

/** The email id a story URI names, or null. */
export function storyEmailId(uri: string): string | null {
  if (!uri.startsWith(PREFIX) || !uri.endsWith('/story')) return null;
  const id = uri.slice(PREFIX.length, -'/story'.length);
  return UUID.test(id) ? id.toLowerCase() : null;
}

/** resources/read: the story, or an MCP error naming what is wrong (unknown URI, scope, no such email). */
export async function readStory(db: Knex, auth: Auth, uri: string): Promise<ReadResourceResult> {
  const emailId = storyEmailId(uri);
  if (!emailId) throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${uri}`);
  if (!auth.oauth?.scopes.has(STORY_SCOPE))
    throw new McpError(ErrorCode.InvalidRequest, `This access token lacks the \`${STORY_SCOPE}\` scope.`);
  try {
    const story = await loadStory(db, auth.team.id, emailId);
    return { contents: [{ uri, mimeType: 'text/markdown', text: renderStory(story) }] };
  } catch (err) {
    // -32002: the MCP specification's "resource not found".
    if (err instanceof ServiceError && err.status === 404) throw new McpError(-32002, `Resource not found: ${uri}`);
    throw err;
  }
}
