// The shapes of the contact import operations (interface spec, Contact import): the form the upload takes (for the
// reference; the handler reads it as a stream, api/middleware/multipart.ts), ContactImport, and the kept failures.
import { z } from 'zod';
import { importStatuses, type ImportFailureRow, type ImportRow } from '../../shared/imports/store.ts';
import { FAILURES_KEPT, IMPORT_MAX_BYTES, MAX_COLUMNS } from '../../shared/imports/limits.ts';
import { iso, isoRequired } from '../../shared/time.ts';
import { timestamp } from './schemas.ts';

const jsonText = (what: string) => z.string().meta({ contentMediaType: 'application/json' }).describe(what);

export const importForm = z
  .object({
    file: z
      .string()
      .meta({ contentMediaType: 'text/csv' })
      .describe(
        `The CSV, up to ${IMPORT_MAX_BYTES} bytes (50 MB; past it 413 naming \`file\`), UTF-8 (a byte order mark is ignored). Comma-separated; a field may be double-quoted (\`""\` inside is a quote, line breaks inside are kept); rows end at \\n, \\r\\n or \\r, mixed in one file; empty lines are skipped. The first row names the columns: at most ${MAX_COLUMNS}, each named, no name twice (without regard to case). A row may have fewer fields than the header (the rest read as empty), not more. Stored as given: a cell that looks like a spreadsheet formula (\`=\`, \`+\`, \`-\`, \`@\`) is text, never evaluated.`,
      ),
    column_map: jsonText(
      "JSON object: `email`, `first_name`, `last_name`, `full_name`, `unsubscribed`, `subscription_status` as column names, and `properties`: `{key: column}` or `{key: {column, type}}`. `full_name` is split into first and last name at its first space (`first_name`/`last_name` columns win where not empty). `subscription_status` is `subscribed`, `unsubscribed` or `never_subscribed`; `unsubscribed` is true/false (also yes/no, 1/0); a row is never stored as more subscribed than either says (`unsubscribed` is stored as `unsubscribed: true`; `never_subscribed` as the contact's never_subscribed flag, not unsubscribed: no topic's opt_in default reaches it and it is opted out of every topic that would, until a choice of its own opts it in; the import opts neither in to any topic). A property key must be a contact property of the team (else 422 naming `column_map.properties.<key>`); a `type` given must be the property's (its values are read as that type; a cell that is not one fails its row). A field the column_map does not name (every field, without one) is read from the column of its own name if the header has one (`email`, ..., `subscription_status`, without regard to case); properties only as it names them. A name that is not a column of the header is 422 naming the field. Columns not mapped are ignored; an empty cell sets nothing.",
    ).optional(),
    on_conflict: z
      .enum(['upsert', 'skip'])
      .optional()
      .describe(
        "`skip` (default): an address that is already a contact is skipped. `upsert`: it is updated with the row's values (names and `unsubscribed` where given, properties merged); an address given twice in the file is one contact, its later rows applied over the first.",
      ),
    segments: jsonText(
      "JSON array of `{id}` (or ids): every contact the import creates or updates is added to these segments. A segment that is not the team's is 422 naming `segments.<i>.id`.",
    ).optional(),
    topics: jsonText(
      "JSON array of `{id, subscription}` (`opt_in` or `opt_out`): recorded for every contact the import creates or updates (an `opt_in` is not recorded for a row that says unsubscribed or never_subscribed). A topic that is not the team's is 422 naming `topics.<i>.id`.",
    ).optional(),
  })
  .meta({ id: 'ContactImportForm' });

const count = (what: string) => z.number().int().describe(what);

export const contactImport = z
  .object({
    object: z.literal('contact_import'),
    id: z.uuid(),
    status: z
      .enum(importStatuses)
      .describe(
        '`queued` → `in_progress` → `completed`, or `failed` when the file could not be read to its end (the rows before stay imported).',
      ),
    created_at: timestamp,
    completed_at: timestamp.nullable().describe('When the import finished (completed or failed); null until then.'),
    counts: z
      .object({
        total: count("Data rows in the file (the header row not counted), known from the upload's check."),
        created: count('Rows that created a contact.'),
        updated: count('Rows that updated an existing contact (on_conflict `upsert`).'),
        skipped: count('Rows whose address was already a contact (on_conflict `skip`).'),
        failed: count('Rows that could not be imported; the first 1,000 are kept with their reasons.'),
      })
      .describe('Read live while the import runs: each batch of rows commits with its counts.'),
  })
  .meta({ id: 'ContactImport' });

export const importFailures = z
  .object({
    object: z.literal('contact_import_failures'),
    import_id: z.uuid(),
    status: z.enum(importStatuses),
    failed: count('Rows that failed so far.'),
    error: z
      .string()
      .nullable()
      .describe('Why the import as a whole failed (status `failed`): the row the file could no longer be read at.'),
    data: z
      .array(
        z.object({
          row: count("The row's number in the file, the header being row 1 (as a spreadsheet numbers them)."),
          email: z.string().nullable().describe("The row's address cell as given (null when empty)."),
          reason: z
            .string()
            .describe(
              'Why, naming the column or property: a missing or unusable address, a value of the wrong type, the allowance.',
            ),
        }),
      )
      .describe(`The first ${FAILURES_KEPT} failed rows, in file order.`),
  })
  .meta({ id: 'ContactImportFailures' });

export function presentImport(row: ImportRow): z.input<typeof contactImport> {
  return {
    object: 'contact_import',
    id: row.id,
    status: row.status,
    created_at: isoRequired(row.created_at),
    completed_at: iso(row.completed_at),
    counts: { total: row.total, created: row.created, updated: row.updated, skipped: row.skipped, failed: row.failed },
  };
}

export function presentFailures(row: ImportRow, failures: ImportFailureRow[]): z.input<typeof importFailures> {
  return {
    object: 'contact_import_failures',
    import_id: row.id,
    status: row.status,
    failed: row.failed,
    error: row.error,
    data: failures,
  };
}
