// Templates (resend-api.md §1.9): create, list, retrieve, update, delete, publish, duplicate, by id or alias.
import * as templates from '../../shared/templates/templates.ts';
import { deleteTemplate, findTemplate, listTemplates } from '../../shared/templates/store.ts';
import { notFound } from '../../shared/errors.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { defineOperation } from './operation.ts';
import { deleted, ref } from './schemas.ts';
import {
  createBody,
  presentListItem,
  presentTemplate,
  template,
  templateListItem,
  templateParams,
  updateBody,
} from './template-schemas.ts';

const base = { tag: 'templates', permission: 'full_access' } as const;
const answer = (row: { id: string }) => ({ object: 'template' as const, id: row.id });

export const templateOperations = [
  defineOperation({
    ...base,
    operationId: 'createTemplate',
    method: 'post',
    path: '/templates',
    summary: 'Create a template',
    description: [
      'Create a template: its html (or a block `document`), text, subject, from, reply_to and the variables it uses. It starts as a draft; sends use it once published.',
      '',
      'The whole draft is checked: a syntax error, an unknown helper or an undeclared variable is 422 naming the field, the line and the column (`details.line`, `details.column`; `details.block_id` in a document). See docs/templates.md for the language.',
    ].join('\n'),
    scope: 'templates:write',
    status: 201,
    body: createBody,
    response: ref('template'),
    handler: async ({ auth, body, deps }) =>
      answer(await templates.createTemplate(deps.db, auth.team.id, body, deps.config.PUBLIC_BASE_URL)),
  }),
  defineOperation({
    ...base,
    operationId: 'listTemplates',
    method: 'get',
    path: '/templates',
    summary: 'List templates',
    description: "List the team's templates, newest first, with their status.",
    scope: 'templates:read',
    query: listQuery,
    response: listEnvelope(templateListItem),
    handler: async ({ auth, query, deps }) =>
      toList(await listTemplates(deps.db, auth.team.id, query), presentListItem),
  }),
  defineOperation({
    ...base,
    operationId: 'getTemplate',
    method: 'get',
    path: '/templates/{id_or_alias}',
    summary: 'Retrieve a template',
    description:
      'Retrieve a template by id or alias: its draft (what an update changes), its variables, `status`, `published_at` and whether the draft is ahead of the published version (`has_unpublished_versions`).',
    scope: 'templates:read',
    params: templateParams,
    response: template,
    handler: async ({ auth, params, deps }) => {
      const row = await findTemplate(deps.db, auth.team.id, params.id_or_alias);
      if (!row) throw notFound('Template');
      return presentTemplate(row);
    },
  }),
  defineOperation({
    ...base,
    operationId: 'updateTemplate',
    method: 'patch',
    path: '/templates/{id_or_alias}',
    summary: 'Update a template',
    description:
      'Change the draft: any field of the create body. A change of the content gives the draft a new version id; sends keep using the published version until the next publish. `variables`, when given, replaces the whole list. Checked as a create is; nothing is written when it fails.',
    scope: 'templates:write',
    params: templateParams,
    body: updateBody,
    response: ref('template'),
    handler: async ({ auth, params, body, deps }) => {
      const row = await templates.updateTemplate(
        deps.db,
        auth.team.id,
        params.id_or_alias,
        body,
        deps.config.PUBLIC_BASE_URL,
      );
      if (!row) throw notFound('Template');
      return answer(row);
    },
  }),
  defineOperation({
    ...base,
    operationId: 'deleteTemplate',
    method: 'delete',
    path: '/templates/{id_or_alias}',
    summary: 'Delete a template',
    description:
      'Delete a template and its versions; emails sent with it keep their content. A send naming it is then 422.',
    scope: 'templates:write',
    params: templateParams,
    response: deleted('template'),
    handler: async ({ auth, params, deps }) => {
      const row = await deleteTemplate(deps.db, auth.team.id, params.id_or_alias);
      if (!row) throw notFound('Template');
      return { object: 'template' as const, id: row.id, deleted: true as const };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'publishTemplate',
    method: 'post',
    path: '/templates/{id_or_alias}/publish',
    summary: 'Publish a template',
    description:
      'Publish the draft: it becomes an immutable version, and sends naming the template render it from now on. Publishing an unchanged draft changes nothing.',
    scope: 'templates:write',
    params: templateParams,
    response: ref('template'),
    handler: async ({ auth, params, deps }) =>
      answer(await templates.publishTemplate(deps.db, auth.team.id, params.id_or_alias)),
  }),
  defineOperation({
    ...base,
    operationId: 'duplicateTemplate',
    method: 'post',
    path: '/templates/{id_or_alias}/duplicate',
    summary: 'Duplicate a template',
    description:
      'Make a new draft template from the draft of this one (named "… (copy)", no alias, not published); its id.',
    scope: 'templates:write',
    params: templateParams,
    response: ref('template'),
    handler: async ({ auth, params, deps }) =>
      answer(await templates.duplicateTemplate(deps.db, auth.team.id, params.id_or_alias)),
  }),
];
