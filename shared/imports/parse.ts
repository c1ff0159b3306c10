// How a contact import's CSV is read: comma-separated, fields optionally in double quotes ("" inside one is a quote,
// line breaks inside one are kept), records ending at \n, \r\n or \r (mixed in one file is fine), empty lines
// skipped, a UTF-8 byte order mark ignored, a quote inside an unquoted field kept as it is. The first record is the
// header row. The api's scan (shared/imports/scan.ts) counts the records by the same rules.
import { parse, type Options, type Parser } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { formError, MAX_COLUMNS, MAX_ROW_BYTES } from './limits.ts';

export const csvOptions: Options = {
  bom: true,
  delimiter: ',',
  record_delimiter: ['\r\n', '\n', '\r'],
  relax_quotes: true,
  relax_column_count: true,
  skip_empty_lines: true,
  max_record_size: MAX_ROW_BYTES,
};

/** A streaming parser of the file's records (arrays of strings), the header row first. */
export function csvParser(): Parser {
  return parse(csvOptions);
}

/**
 * The header row's column names, trimmed. Refused (422 naming `file`) when the file has none, when a name is empty
 * or given twice (compared without regard to case, as the columns are looked up), or past MAX_COLUMNS.
 */
export function headerColumns(header: Buffer): string[] {
  const records = parseSync(header, { ...csvOptions, to: 1 }) as string[][];
  const row = records[0];
  if (!row || row.length === 0)
    throw formError('file', 'is empty: the first row must name the columns (for example `email,first_name`)');
  if (row.length > MAX_COLUMNS)
    throw formError('file', `has ${row.length} columns in its header row; at most ${MAX_COLUMNS} are read`);
  const names = row.map((c) => c.trim());
  const seen = new Map<string, number>();
  names.forEach((name, i) => {
    if (name === '')
      throw formError('file', `has no name for column ${i + 1} of its header row (every column needs a name)`);
    const earlier = seen.get(name.toLowerCase());
    if (earlier !== undefined)
      throw formError(
        'file',
        `names the column \`${name}\` twice in its header row (columns ${earlier + 1} and ${i + 1})`,
      );
    seen.set(name.toLowerCase(), i);
  });
  return names;
}
