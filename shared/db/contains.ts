// A search text as a LIKE pattern: the text is data, never a pattern (the searches of received mail and sent
// emails, GET /emails/receiving and GET /emails `search`).

/** Up to this many characters of search text. */
export const SEARCH_MAX_LENGTH = 200;

/**
 * A LIKE pattern matching `text` anywhere, with `%`, `_` and the escape character itself taken literally (use it
 * with `escape '\'`; standard_conforming_strings: '\' is one backslash).
 */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
