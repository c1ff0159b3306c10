// The templates area's request and response schemas, and how a row is shown.
import { z } from 'zod';
import { blockDocumentSchema } from '../../shared/templates/blocks.ts';
import { MAX_VARIABLES, variableTypes } from '../../shared/templates/variables.ts';
import { MAX_REPLY_TO } from '../../shared/templates/fields.ts';
import type { TemplateRow } from '../../shared/templates/store.ts';
import { checkCodes } from '../../shared/checks/types.ts';
import { RULES } from '../../shared/checks/rules.ts';
import { iso, isoRequired } from '../../shared/time.ts';
import { timestamp } from './schemas.ts';

export const CONTENT_MAX_CHARS = 512 * 1024;

export const templateParams = z.object({
  id_or_alias: z.string().min(1).max(200).describe("The template's id, or its alias"),
});

const value = z.union([z.string(), z.number(), z.boolean(), z.record(z.string(), z.unknown()), z.array(z.unknown())]);

const variableInput = z.object({
  key: z
    .string()
    .describe(
      'The name the template uses (`{{{KEY}}}`): a letter, then up to 49 letters, digits or underscores; unique in the template; not a reserved name (`raw`, `if`, `each`, `FIRST_NAME`, `EMAIL`, `UNSUBSCRIBE_URL`, `contact`, ...)',
    ),
  type: z.enum(variableTypes).describe('`string`, `number`, `boolean`, `object` or `list`: what a send must give'),
  fallback_value: value
    .nullish()
    .describe(
      "What a send that gives no value gets, of the variable's type; null for none (the value is then required when printed)",
    ),
});

export const fields = {
  alias: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/,
      'must be 1-100 letters, digits, `.`, `_` or `-`, starting with a letter or digit',
    )
    .nullish()
    .describe(
      'Another name for the template, unique in the team, usable wherever its id is (not a UUID); null for none',
    ),
  from: z.string().max(1000).nullish().describe('The sender a send uses when it gives no `from`'),
  subject: z.string().max(998).nullish().describe('The subject a send uses when it gives none; may hold variables'),
  reply_to: z
    .union([z.string(), z.array(z.string())])
    .nullish()
    .describe(`Where replies go when a send gives no \`reply_to\` (up to ${MAX_REPLY_TO} addresses)`),
  html: z
    .string()
    .max(CONTENT_MAX_CHARS)
    .optional()
    .describe(
      'The HTML body, with variables (`{{{NAME}}}`, `{{{NAME|fallback}}}`, `{{{raw NAME}}}`, `{{#if}}`, `{{#each}}`); required unless `document` is given. Giving it replaces a `document`',
    ),
  text: z
    .string()
    .max(CONTENT_MAX_CHARS)
    .nullish()
    .describe('The text part, with variables; null or absent: made from the html at each send. Not with a `document`'),
  document: blockDocumentSchema
    .nullish()
    .describe(
      'The body as a document of blocks (instead of `html`): its html and text are rendered from it when written',
    ),
  variables: z
    .array(variableInput)
    .max(MAX_VARIABLES)
    .optional()
    .describe(`The variables the template uses, up to ${MAX_VARIABLES}; every variable printed must be declared`),
};

const hasBody = (b: unknown) =>
  b !== null &&
  typeof b === 'object' &&
  ((b as Record<string, unknown>).html !== undefined || !!(b as Record<string, unknown>).document);

export const createBody = z
  .object({ name: z.string().trim().min(1).max(200).describe('1-200 characters'), ...fields })
  .refine(hasBody, { path: ['html'], message: 'Required unless `document` is given', when: () => true })
  .meta({ id: 'CreateTemplateRequest' });

export const updateBody = z
  .object({ name: z.string().trim().min(1).max(200).optional().describe('1-200 characters'), ...fields })
  .meta({ id: 'UpdateTemplateRequest' });

const status = z.enum(['draft', 'published']).describe('`published` once a version was published');

export const templateListItem = z
  .object({
    id: z.uuid(),
    name: z.string(),
    alias: z.string().nullable(),
    status,
    published_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'TemplateListItem' });

const variable = z
  .object({
    id: z.uuid(),
    key: z.string(),
    type: z.enum(variableTypes),
    fallback_value: value.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'TemplateVariable' });

export const template = z
  .object({
    object: z.literal('template'),
    ...templateListItem.shape,
    current_version_id: z.uuid().describe("The draft's version: a new id whenever its content changes"),
    has_unpublished_versions: z.boolean().describe('The draft differs from what sends use (or nothing is published)'),
    from: z.string().nullable(),
    subject: z.string().nullable(),
    reply_to: z.array(z.string()).nullable(),
    html: z.string().describe('As given, or rendered from `document`'),
    text: z.string().nullable(),
    document: blockDocumentSchema.nullable(),
    variables: z.array(variable),
  })
  .meta({ id: 'Template' });

export function presentListItem(
  row: Pick<
    TemplateRow,
    'id' | 'name' | 'alias' | 'published_version_id' | 'published_at' | 'created_at' | 'updated_at'
  >,
) {
  return {
    id: row.id,
    name: row.name,
    alias: row.alias,
    status: row.published_version_id ? ('published' as const) : ('draft' as const),
    published_at: iso(row.published_at),
    created_at: isoRequired(row.created_at),
    updated_at: isoRequired(row.updated_at),
  };
}

export function presentTemplate(row: TemplateRow): z.input<typeof template> {
  return {
    object: 'template',
    ...presentListItem(row),
    current_version_id: row.current_version_id,
    has_unpublished_versions: row.published_version_id !== row.current_version_id,
    from: row.from,
    subject: row.subject,
    reply_to: row.reply_to,
    html: row.html,
    text: row.text,
    document: row.document,
    variables: row.variables.map((v) => ({ ...v, fallback_value: v.fallback_value as z.infer<typeof value> | null })),
  };
}

const rules = Object.entries(RULES)
  .map(([code, rule]) => `\`${code}\`: ${rule}`)
  .join('; ');

export const emailCheck = z
  .object({
    code: z.enum(checkCodes).describe(`The check. Rules and thresholds: ${rules}`),
    status: z
      .enum(['fail', 'warn', 'pass'])
      .describe('`fail` stops a campaign send unless it sends `acknowledge_checks: true`'),
    title: z.string().describe("The check's name"),
    message: z.string().describe('What was found'),
    block_id: z.string().optional().describe('The block the finding is about (a block document)'),
  })
  .meta({ id: 'EmailCheck' });

export const checksResult = z
  .object({
    object: z.literal('checks'),
    status: z.enum(['fail', 'warn', 'pass']).describe('The worst status among the findings'),
    checks: z.array(emailCheck).describe("Every check's findings, in the order of the codes"),
  })
  .meta({ id: 'EmailChecks' });
