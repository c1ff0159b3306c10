// Library: handlebars 4.7.10. Internals used: `Handlebars.Parser.lexer.yylloc` (the jison lexer of
// dist/cjs/handlebars/compiler/parser.js, exported as `Parser`), read right after a failed parse. Guarded by
// test/lib-internals.test.ts.
//
// A syntax error from Handlebars.parse is a plain Error whose message says the line ("Parse error on line 3:")
// and shows an excerpt of at most 20 characters before the error with a caret under it, so the column cannot be
// read back from it. The jison parser knows the offending token's position (it passes it as `hash.loc` to its
// parseError, which throws it away); its lexer keeps the same position in `yylloc` until the next parse. Parsing is
// synchronous, so reading it right after the throw reads the failed parse's. Nothing is written to the library.
import Handlebars from 'handlebars';

export const HANDLEBARS_VERSION = '4.7.10';

interface Lexer {
  yylloc?: { first_line: number; first_column: number };
}

/** Where the last failed Handlebars.parse stopped: a 1-based line and 0-based column, or null if not known. */
export function lastParseErrorPosition(): { line: number; column: number } | null {
  const lexer = (Handlebars as unknown as { Parser?: { lexer?: Lexer } }).Parser?.lexer;
  const loc = lexer?.yylloc;
  if (!loc || !Number.isInteger(loc.first_line) || !Number.isInteger(loc.first_column)) return null;
  return { line: loc.first_line, column: loc.first_column };
}
