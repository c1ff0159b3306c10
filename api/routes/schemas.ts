// Schemas several areas share.
import { z } from 'zod';
import { SEARCH_MAX_LENGTH } from '../../shared/db/contains.ts';

export const timestamp = z.iso.datetime().describe('ISO 8601 UTC with milliseconds');
export const uuid = z.uuid();
/** A path parameter, described for the reference: `pathId('domain')` is "The domain's id". */
export const pathId = (what: string) => z.uuid().describe(`The ${what}'s id`);
/** `{id}` of the areas whose paths name their item so. */
export const idParams = (what: string) => z.object({ id: pathId(what) });

export const errorSchema = z
  .object({
    statusCode: z.number().int(),
    name: z.string(),
    message: z.string(),
    code: z.number().int().optional(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    claimable: z.boolean().optional(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'Error' });

export function deleted<T extends string>(object: T) {
  return z.object({ object: z.literal(object), id: z.uuid(), deleted: z.literal(true) });
}

export function ref<T extends string>(object: T) {
  return z.object({ object: z.literal(object), id: z.uuid() });
}

/** The fields every attachment answer carries (sent and received alike); `content_id` says when it is given. */
export function attachmentFields(contentId: string) {
  return {
    id: z.uuid(),
    filename: z.string().nullable(),
    content_type: z.string(),
    content_disposition: z.enum(['attachment', 'inline']),
    size: z.number().int().describe('Bytes'),
    content_id: z.string().optional().describe(contentId),
  };
}

/**
 * The `search` query parameter of the mail lists (GET /emails/receiving and GET /emails): the spec's semantics,
 * one description.
 */
export const mailSearch = z
  .string()
  .min(1)
  .max(SEARCH_MAX_LENGTH)
  .optional()
  .describe(
    `1-${SEARCH_MAX_LENGTH} characters: a case-insensitive substring of the subject, the sender's address or name, or any recipient; \`%\` and \`_\` match literally`,
  );
