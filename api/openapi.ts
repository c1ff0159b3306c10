// The OpenAPI 3.1 document, generated from the same declarations the router serves.
import { z } from 'zod';
import type { Operation } from './routes/operation.ts';
import { errorSchema, timestamp } from './routes/schemas.ts';
import type { EventType } from '../shared/events.ts';
import { describeScope, scopeList } from '../shared/oauth/scopes.ts';

type Json = Record<string, unknown>;

/**
 * The error answers the operations share, each written once under `components.responses` and referenced by status:
 * written out in each of 228 operations they were 40 % of the document, and Swagger UI's OpenAPI 3.1 parser takes
 * time in proportion to it (the reference page renders ~1.3 s sooner this way).
 */
const errorResponses: Record<string, { name: string; description: string }> = {
  '400': { name: 'BadRequest', description: 'Malformed request (bad JSON, missing User-Agent, bad Idempotency-Key)' },
  '401': { name: 'Unauthorized', description: 'missing_api_key or restricted_api_key' },
  '403': { name: 'Forbidden', description: 'invalid_api_key, suspended_api_key or another refusal' },
  '404': { name: 'NotFound', description: 'not_found' },
  '413': { name: 'PayloadTooLarge', description: 'The body is larger than the operation accepts' },
  '422': {
    name: 'ValidationError',
    description:
      'validation_error with errors[], missing_required_field, or invalid_parameter (a malformed id in the path)',
  },
  '429': { name: 'RateLimited', description: 'rate_limit_exceeded or a quota' },
  '500': { name: 'ApplicationError', description: 'application_error' },
  '501': { name: 'NotImplemented', description: 'not_implemented: this area is not built yet' },
};
const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
const errorRef = (code: string) => ({ $ref: `#/components/responses/${errorResponses[code].name}` });
/** What any keyed operation may answer (501 only an area not built yet; an operation without a key fewer). */
const keyedErrors = Object.keys(errorResponses).filter((code) => code !== '501');

/** Each area's line in the reference, in the order the reference lists them. */
const TAGS: Record<string, string> = {
  emails: 'Send email (one or a batch of 100), follow it, reschedule or cancel it, read its delivery attempts',
  domains: 'Domains to send from and receive at: their DNS records, verification, DKIM, claims, brand logo',
  receiving: 'Mail received at your domains: the message, its attachments and its raw source',
  suppressions: 'Addresses your team does not send to: bounces, complaints, unsubscribes and your own',
  webhooks: 'Endpoints that receive signed events (sent, delivered, bounced, received, ...) and their deliveries',
  topics: 'What an address subscribes to; a send under a topic reaches only its subscribers',
  contacts: 'The audience: contacts with typed properties, their segment memberships and topic choices',
  'contact-properties': 'Typed custom fields (string, number, boolean) every contact can carry',
  segments: "Named groups of contacts, added by hand, matched by a filter, or both (the SDK's audiences are segments)",
  unsubscribe: 'The pages behind the List-Unsubscribe links of sent mail (no API key: the link is the credential)',
  'api-keys': "The team's API keys",
  auth: 'The dashboard session: sign-up, e-mail verification, sign-in with MFA, sign-out, password reset (cookie, never an API key)',
  teams: 'Your teams, switching between them, members, roles and invitations, export and deletion (session only)',
  team: 'The team an API key belongs to',
  logs: "Every request made with the team's API keys, with its bodies (secrets redacted)",
  operations: 'Health, readiness and this document (no API key)',
  templates:
    'Versioned content with typed variables, by id or alias (HTML or a document of blocks), and the pre-send checks',
  broadcasts: 'One message to a segment: drafts, the send gate, the fan-out, reports (docs/broadcasts.md)',
  automations: 'Not built yet: every operation answers 501',
  events: 'Not built yet: every operation answers 501',
  billing: 'Not built yet: every operation answers 501',
  inbox: 'Not built yet: every operation answers 501 (support inboxes: threads, labels, drafts)',
  oauth:
    'Access granted to OAuth clients (an MCP client, an app), the consent page, and the API as a protected resource; the authorization server is at /oauth, its metadata at /.well-known/oauth-authorization-server (docs/oauth.md)',
  mcp: 'The remote MCP server, whose tools are the operations an OAuth scope reaches: an OAuth access token only (docs/mcp.md)',
};

/** The scopes a client may ask for (those the operations declare and the spec's), each in plain words. */
function oauthScopes(operations: Operation[]): Record<string, string> {
  const scopes: Record<string, string> = {
    offline_access: 'A refresh token: stay connected (30 days, rotated on each use) until the grant is revoked',
  };
  for (const scope of scopeList(operations.map((op) => op.scope))) scopes[scope] = describeScope(scope);
  return scopes;
}

/** JSON Schema of `schema`, its named parts hoisted into `components`. */
function convert(schema: z.ZodType, components: Json, io: 'input' | 'output'): Json {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
  const defs = (json.$defs ?? {}) as Json;
  delete json.$defs;
  delete json.$schema;
  const fix = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(fix);
    if (!node || typeof node !== 'object') return node;
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out[k] = v.replace('#/$defs/', '#/components/schemas/');
      else if (k === 'pattern' && ['uuid', 'date-time', 'email'].includes((node as Json).format as string)) continue;
      else if (k === 'maximum' && v === Number.MAX_SAFE_INTEGER) continue;
      else if (k === 'minimum' && v === Number.MIN_SAFE_INTEGER) continue;
      else out[k] = fix(v);
    }
    return out;
  };
  for (const [name, def] of Object.entries(defs)) components[name] = fix(def);
  return fix(json) as Json;
}

function parameters(op: Operation, components: Json): Json[] {
  const out: Json[] = [];
  for (const [where, schema] of [
    ['path', op.params],
    ['query', op.query],
    ['header', op.headers],
  ] as const) {
    if (!schema) continue;
    const json = convert(schema, components, 'input');
    const props = (json.properties ?? {}) as Record<string, Json>;
    const required = new Set((json.required ?? []) as string[]);
    for (const [name, prop] of Object.entries(props)) {
      const { description, ...rest } = prop;
      out.push({
        name,
        in: where,
        required: where === 'path' || required.has(name),
        schema: rest,
        ...(description ? { description } : {}),
      });
    }
  }
  return out;
}

function operationObject(op: Operation, components: Json): Json {
  const status = String(op.status ?? 200);
  const success = {
    description: op.oauthOnly
      ? 'The JSON-RPC answer (a notification is answered 202, without a body)'
      : op.raw
        ? 'The file itself'
        : 'Success',
    content: { 'application/json': { schema: convert(op.response, components, 'output') } },
  };
  const responses: Json = { [status]: success };
  for (const s of op.alsoAnswers ?? [])
    responses[String(s)] = { ...success, description: `Also answered with status ${s}` };
  const errors = op.permission === 'none' ? ['400', '404', '500'] : keyedErrors;
  for (const code of errors) if (!responses[code]) responses[code] = errorRef(code);
  if (op.notImplemented) responses['501'] = errorRef('501');
  const result: Json = {
    operationId: op.operationId,
    summary: op.summary,
    description: op.description,
    tags: [op.tag],
    'x-service-permission': op.permission,
    'x-service-scope': op.scope,
    parameters: parameters(op, components),
    responses,
  };
  if (op.permission === 'none') result.security = [];
  if (op.permission === 'session') result.security = [{ sessionCookie: [] }];
  // `null`: no API key or session; /mcp takes an OAuth access token for itself (the scopes are its tools').
  if (op.permission === null) result.security = [{ oauth2: [] }];
  if (op.oauthOnly)
    responses['401'] = {
      content: errorContent,
      description:
        'No OAuth access token for this resource (none, an API key, a token for another resource, expired or revoked)',
      headers: {
        'WWW-Authenticate': {
          description: 'Bearer, with `resource_metadata` naming the protected resource metadata (RFC 9728)',
          schema: { type: 'string' },
        },
      },
    };
  const body = op.bodyDoc ?? op.body;
  if (body) {
    const media: Json = { schema: convert(body, components, 'input') };
    if (op.examples) media.examples = op.examples;
    result.requestBody = { required: true, content: { [op.bodyMedia ?? 'application/json']: media } };
  }
  if (op.idempotent) {
    (result.parameters as Json[]).push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: '1-256 characters; the same key with the same body replays the first answer for 24 hours',
      schema: { type: 'string', minLength: 1, maxLength: 256 },
    });
  }
  return result;
}

/** An event type whose payload the document describes under `webhooks`. */
export interface EventDoc {
  type: EventType;
  summary: string;
  description: string;
  /** The payload's `data`. */
  data: z.ZodType;
}

/** OpenAPI 3.1 `webhooks`: what an endpoint subscribed to each type receives. */
function webhookObject(event: EventDoc, components: Json): Json {
  const name = `${event.type.replace(/(^|[._])(.)/g, (_, __, c: string) => c.toUpperCase())}Event`;
  const payload = z
    .object({
      type: z.literal(event.type),
      created_at: timestamp.describe('When the event was recorded.'),
      data: event.data,
    })
    .meta({ id: name });
  return {
    post: {
      operationId: name[0].toLowerCase() + name.slice(1),
      summary: event.summary,
      description: event.description,
      tags: ['webhooks'],
      security: [],
      requestBody: {
        required: true,
        description:
          'Signed with the Standard Webhooks headers (`webhook-id`, `-timestamp`, `-signature`, and as `svix-*`).',
        content: { 'application/json': { schema: convert(payload, components, 'output') } },
      },
      responses: {
        '200': { description: 'Any 2xx within 15 seconds acknowledges the event.' },
        '400': { description: 'Any other answer (or none) is retried on the schedule, then parked.' },
      },
    },
  };
}

export function buildOpenApi(
  operations: Operation[],
  info: { version: string; serverUrl: string },
  events: EventDoc[] = [],
): Json {
  const root = info.serverUrl.replace(/\/$/, '');
  const components: Json = {};
  convert(errorSchema, components, 'output');
  const paths: Record<string, Json> = {};
  for (const op of operations) {
    paths[op.path] ??= {};
    paths[op.path][op.method] = operationObject(op, components);
  }
  // The areas in reading order: what is built first, then what answers 501; an area added without a line in
  // TAGS is an error here, caught by the tests.
  const used = new Set(operations.map((o) => o.tag));
  for (const name of used) if (!TAGS[name]) throw new Error(`tag ${name} has no description in api/openapi.ts`);
  const tags = Object.entries(TAGS)
    .filter(([name]) => used.has(name))
    .map(([name, description]) => ({ name, description }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Postwerk email platform API',
      version: info.version,
      description:
        'Transactional and broadcast email with its own MTA and MX. Every path is also served under /api/v1.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: info.serverUrl }, { url: `${info.serverUrl.replace(/\/$/, '')}/api/v1` }],
    security: [{ bearerAuth: [] }],
    tags,
    paths,
    webhooks: Object.fromEntries(events.map((e) => [e.type, webhookObject(e, components)])),
    components: {
      schemas: components,
      responses: Object.fromEntries(
        Object.values(errorResponses).map(({ name, description }) => [name, { description, content: errorContent }]),
      ),
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            "An API key, `rk_...`, or an OAuth access token (the `oauth2` scheme) for this API: a token reaches an operation whose `x-service-scope` it holds, within its granting person's role; none reaches an operation whose `x-service-scope` is null (docs/oauth.md).",
        },
        oauth2: {
          type: 'oauth2',
          description:
            'OAuth 2.1: authorization code with PKCE (`S256`, required), dynamic client registration at /oauth/reg, metadata at /.well-known/oauth-authorization-server. A token is bound to one resource (RFC 8707 `resource`): this API (`/`, sent as the bearer token) or the MCP server (`/mcp`).',
          flows: {
            authorizationCode: {
              authorizationUrl: `${root}/oauth/auth`,
              tokenUrl: `${root}/oauth/token`,
              refreshUrl: `${root}/oauth/token`,
              scopes: oauthScopes(operations),
            },
          },
        },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'postwerk_session',
          description:
            "The dashboard session (POST /auth/login; `__Host-postwerk_session` over https). Writes also need the `X-CSRF-Token` header (the `postwerk_csrf` cookie) and an Origin of this site. `full_access` and `sending_access` routes take it too, acting on the session's current team with the member's role (docs/accounts.md).",
        },
      },
    },
  };
}
