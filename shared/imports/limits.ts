// The limits of a contact import (interface spec, Limits: "CSV import file up to 50 MB ... first 1000 failures
// kept"), and the ones this platform adds so that no file can make the api or the worker hold much in memory.
import { ServiceError } from '../errors.ts';

/** 50 MB: the spec's limit on the CSV file (the `file` part's bytes). */
export const IMPORT_MAX_BYTES = 50 * 1024 * 1024;
/** Failed rows kept with their row number and reason; past it they are only counted. */
export const FAILURES_KEPT = 1000;
/** Columns of the header row: far above any export of contacts, far below what would strain a row's parse. */
export const MAX_COLUMNS = 1000;
/** Bytes of one row (the header too): a row past it cannot be a contact's and would only cost memory. */
export const MAX_ROW_BYTES = 1024 * 1024;

/** A 422 (or `status`) naming one field of the form. */
export function formError(path: string, message: string, status?: number): ServiceError {
  return new ServiceError('validation_error', `Invalid \`${path}\`: ${message}.`, {
    status,
    errors: [{ path, message }],
  });
}

/** The `file` part is larger than the limit: 413, naming the field. */
export const fileTooLarge = () =>
  formError('file', `is larger than ${IMPORT_MAX_BYTES} bytes (50 MB), the limit of a contact import`, 413);
