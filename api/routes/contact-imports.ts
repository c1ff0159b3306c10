// Contact imports (interface spec, Contact imports). The upload is streamed to the blob store as it arrives, checked
// on the way (shared/imports/scan.ts), then its header and form are checked against the team; anything refused
// leaves nothing behind (no import, no file). The worker runs the import (shared/imports/run.ts).
import { z } from 'zod';
import type { Readable } from 'node:stream';
import { newId } from '../../shared/ids.ts';
import { notFound, ServiceError } from '../../shared/errors.ts';
import { listEnvelope, listQuery, toList } from '../../shared/pagination.ts';
import { CsvScanner } from '../../shared/imports/scan.ts';
import { headerColumns } from '../../shared/imports/parse.ts';
import { resolveColumnMap, resolveOptions } from '../../shared/imports/column-map.ts';
import { fileTooLarge, IMPORT_MAX_BYTES } from '../../shared/imports/limits.ts';
import {
  getImport,
  importBlobKey,
  importFailures,
  importStatuses,
  insertImport,
  listImports,
} from '../../shared/imports/store.ts';
import type { BlobStore } from '../../shared/blobs.ts';
import { readMultipart } from '../middleware/multipart.ts';
import { defineOperation } from './operation.ts';
import { ref } from './schemas.ts';
import {
  contactImport,
  importFailures as failuresSchema,
  importForm,
  presentFailures,
  presentImport,
} from './contact-import-schemas.ts';

const base = { tag: 'contacts', permission: 'full_access' } as const;
const FIELD_MAX_BYTES = 1024 * 1024;

/** The file part through the scan into the blob store; the scan's findings. */
async function storeFile(blobs: BlobStore, key: string, part: Readable) {
  const scanner = new CsvScanner();
  part.once('error', (err) => scanner.destroy(err));
  // The scan may refuse the first chunk before putStream (opening its file) listens: the error is kept on the
  // stream (`errored`) and putStream's pipeline rejects with it.
  scanner.on('error', () => {});
  await blobs.putStream(key, part.pipe(scanner));
  return scanner.result();
}

/** An import's id in a path: anything that is not one of the team's imports is a 404 naming the import. */
const importParams = z.object({ id: z.string().max(100).describe("The contact import's id") });

function missingFile(fields: Map<string, string>): ServiceError {
  if (fields.has('file'))
    return new ServiceError(
      'validation_error',
      'Invalid `file`: must be a file part (with a filename), not a text field.',
      {
        errors: [{ path: 'file', message: 'must be a file part (with a filename), not a text field' }],
      },
    );
  return new ServiceError('missing_required_field', 'Missing `file` field: the CSV as a file part.', {
    errors: [{ path: 'file', message: 'is required (the CSV, as a file part of the form)' }],
  });
}

export const contactImportOperations = [
  defineOperation({
    ...base,
    operationId: 'createContactImport',
    method: 'post',
    path: '/contacts/imports',
    summary: 'Import contacts from a CSV',
    description: `Upload a CSV (multipart/form-data) to import contacts in the background; answers once the file is stored and checked. Refused before anything is stored, each with the field or row named: a body not multipart, no \`file\`, a file past 50 MB (413), not UTF-8, a quoted field never closed, a row over 1 MB, an empty header, a header name empty or given twice, more than 1,000 columns, a \`column_map\` naming a column the header lacks or a property key the team lacks, a segment or topic that is not the team's. Rows are then read in batches by the worker; a row that cannot be a contact fails alone (\`GET /contacts/imports/{id}/failures\`). No \`contact.*\` event is sent per row; one audit entry records the import. On a team with a contact allowance (\`contacts_included\`), rows that would add a billable contact past it fail. The file is deleted seven days after the import finishes; the import and its counts stay.`,
    scope: 'contacts:write',
    status: 201,
    bodyDoc: importForm,
    bodyMedia: 'multipart/form-data',
    response: ref('contact_import'),
    handler: async ({ auth, deps, ctx }) => {
      const teamId = auth.team.id;
      // A body declared larger than the file's limit and the fields' room is refused before any of it is read.
      if (Number(ctx.get('content-length') || 0) > IMPORT_MAX_BYTES + 2 * FIELD_MAX_BYTES) {
        ctx.set('Connection', 'close');
        throw fileTooLarge();
      }
      const id = newId();
      const blobKey = importBlobKey(teamId, id);
      let created: { id: string };
      try {
        const form = await readMultipart(ctx, {
          fileField: 'file',
          maxFieldBytes: FIELD_MAX_BYTES,
          drainBytes: IMPORT_MAX_BYTES + 2 * FIELD_MAX_BYTES,
          store: (part) => storeFile(deps.blobs, blobKey, part),
        });
        if (!form.file) throw missingFile(form.fields);
        const columns = headerColumns(form.file.header);
        const fields = Object.fromEntries(form.fields) as Record<string, string | undefined>;
        created = await deps.db.transaction(async (trx) => {
          const columnMap = await resolveColumnMap(trx, teamId, columns, fields.column_map);
          const options = await resolveOptions(trx, teamId, fields);
          return insertImport(trx, {
            id,
            teamId,
            apiKeyId: auth.key?.id ?? null,
            userId: auth.session?.user.id ?? null,
            blobKey,
            fileBytes: form.file!.bytes,
            columns,
            total: form.file!.rows,
            columnMap,
            ...options,
          });
        });
      } catch (err) {
        // A file stored before the refusal (a later part refused, the header, the form) goes with it.
        await deps.blobs.delete(blobKey);
        throw err;
      }
      await deps.contactJobs.importQueued(created.id);
      return { object: 'contact_import' as const, id: created.id };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listContactImports',
    method: 'get',
    path: '/contacts/imports',
    summary: 'List contact imports',
    description: "List the team's imports, newest first; with `status`, only those in it.",
    scope: 'contacts:read',
    query: listQuery.safeExtend({
      status: z.enum(importStatuses).optional().describe('Only imports in this status.'),
    }),
    response: listEnvelope(contactImport),
    handler: async ({ auth, query, deps }) => toList(await listImports(deps.db, auth.team.id, query), presentImport),
  }),
  defineOperation({
    ...base,
    operationId: 'getContactImport',
    method: 'get',
    path: '/contacts/imports/{id}',
    summary: 'Retrieve a contact import',
    description:
      'An import with its status and counts; the counts move while it runs (each batch commits with its own).',
    scope: 'contacts:read',
    params: importParams,
    response: contactImport,
    handler: async ({ auth, params, deps }) => {
      const row = await getImport(deps.db, auth.team.id, params.id);
      if (!row) throw notFound('Contact import');
      return presentImport(row);
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listContactImportFailures',
    method: 'get',
    path: '/contacts/imports/{id}/failures',
    summary: "Read a contact import's failed rows",
    description:
      'The first 1,000 rows that failed, in file order, each with its row number (the header is row 1) and the reason; and, for a `failed` import, why it stopped.',
    scope: 'contacts:read',
    params: importParams,
    response: failuresSchema,
    handler: async ({ auth, params, deps }) => {
      const row = await getImport(deps.db, auth.team.id, params.id);
      if (!row) throw notFound('Contact import');
      return presentFailures(row, await importFailures(deps.db, row.id));
    },
  }),
];
