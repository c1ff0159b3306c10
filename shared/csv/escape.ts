// Writing CSV that people open in spreadsheets. An import stores cells as given, so a contact's name or property may
// hold `=cmd|' /C calc'!A0`: inert in our database and in JSON, but a spreadsheet opening an exported CSV would run it
// (CSV injection, OWASP). Every CSV the platform writes (a contacts export, the dashboard's downloads; none is built
// yet) writes its cells with csvField, which neutralises such text and quotes as RFC 4180 says.

/** Leading characters a spreadsheet takes as the start of a formula (tab and CR too: some strip them first). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV field. Text starting like a formula gets a leading `'` (spreadsheets show the text, the quote hidden);
 * numbers and booleans are written as they are (a negative number is not a formula). Quoted when it holds a comma,
 * a quote or a line break, quotes doubled. null is an empty field.
 */
export function csvField(value: string | number | boolean | null): string {
  if (value === null) return '';
  let text = typeof value === 'string' ? value : String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV row, ended by CRLF (RFC 4180). */
export function csvRow(values: (string | number | boolean | null)[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}
