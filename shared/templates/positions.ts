// Where in a template's own text a problem is, and the 422 that names it. Resend's fallback form is translated
// before Handlebars parses (syntax.ts): each `{{{NAME|fallback}}}` becomes `{{{_v NAME <index>}}}`, the fallback
// kept in a table. The translation changes lengths, so positions Handlebars reports are mapped back to the text
// the customer wrote.
import { ServiceError } from '../errors.ts';
import { lastParseErrorPosition } from '../lib-internals/handlebars-parse-position.ts';

interface Edit {
  /** Where the replacement starts in the translated text, and its length. */
  at: number;
  length: number;
  /** Where the replaced tag starts in the original text, and its length. */
  from: number;
  originalLength: number;
}

export interface Rewrite {
  original: string;
  text: string;
  fallbacks: string[];
  edits: Edit[];
}

/**
 * `{{{NAME|fallback}}}`, `{{NAME|fallback}}` and `{{{raw NAME|fallback}}}` with NAME a variable or a dotted path. Not
 * after a backslash (Handlebars' escape for a literal `{{`). A fallback holds no braces and no line break; spaces
 * around it are dropped. A tag whose braces do not pair (`{{NAME|x}}}`) is left alone, for the parser to report.
 */
const FALLBACK_TAG =
  /(?<!\\)\{\{(\{?)\s*(raw\s+)?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\|([^{}\r\n]*)\}\}(\}?)/g;

export function rewriteFallbacks(source: string): Rewrite {
  const fallbacks: string[] = [];
  const edits: Edit[] = [];
  let shift = 0;
  const text = source.replace(
    FALLBACK_TAG,
    (tag: string, open: string, raw: string | undefined, name: string, fallback: string, close: string, at: number) => {
      if (open.length !== close.length) return tag;
      const braces = open ? ['{{{', '}}}'] : ['{{', '}}'];
      const out = `${braces[0]}${raw ? 'raw' : '_v'} ${name} ${fallbacks.length}${braces[1]}`;
      fallbacks.push(fallback.trim());
      edits.push({ at: at + shift, length: out.length, from: at, originalLength: tag.length });
      shift += out.length - tag.length;
      return out;
    },
  );
  return { original: source, text, fallbacks, edits };
}

function offsetOf(text: string, line: number, column: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const next = text.indexOf('\n', offset);
    if (next < 0) return text.length;
    offset = next + 1;
  }
  return Math.min(offset + column, text.length);
}

/** A 1-based line and column in the original text, from Handlebars' 1-based line and 0-based column. */
export function positionIn(rewrite: Rewrite, line: number, column: number): { line: number; column: number } {
  const offset = offsetOf(rewrite.text, line, column);
  let original = offset;
  for (const e of rewrite.edits) {
    if (e.at > offset) break;
    original = offset < e.at + e.length ? e.from : offset - (e.at + e.length) + (e.from + e.originalLength);
  }
  const before = rewrite.original.slice(0, original);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: original - lineStart + 1 };
}

const TOKENS: Record<string, string> = {
  EOF: 'end of text: a tag or a {{#block}} is left open',
  CLOSE: '`}}`',
  CLOSE_UNESCAPED: '`}}}`',
  CLOSE_RAW_BLOCK: '`}}}}`',
  CLOSE_BLOCK_PARAMS: '`|` (a fallback is written {{{NAME|fallback}}})',
  OPEN: '`{{`',
  OPEN_BLOCK: '`{{#`',
  OPEN_ENDBLOCK: '`{{/`',
  OPEN_INVERSE: '`{{^`',
  INVERSE: '`{{else}}`',
  OPEN_PARTIAL: '`{{>`',
  ID: 'a name',
  INVALID: 'a character that cannot be in a tag',
};

/** A syntax or usage problem in one field of a template: 422 validation_error naming the field and where. */
export class TemplateError extends ServiceError {
  constructor(
    readonly field: string,
    readonly at: { line: number; column: number } | null,
    readonly problem: string,
    blockId?: string,
  ) {
    const where = at ? `line ${at.line}, column ${at.column}: ` : '';
    super('validation_error', `Invalid \`${field}\`: ${where}${problem}.`, {
      errors: [{ path: field, message: `${where}${problem}` }],
      details: { field, ...(at ?? {}), ...(blockId ? { block_id: blockId } : {}) },
    });
  }

  /** The same problem named as another field (a block's, with its id). */
  renamed(field: string, blockId?: string): TemplateError {
    return new TemplateError(field, this.at, this.problem, blockId);
  }

  /** Handlebars' parse error, in words, at the position in the customer's text. */
  static fromParse(field: string, rewrite: Rewrite, err: unknown): TemplateError {
    const message = err instanceof Error ? err.message : String(err);
    const known = err as { lineNumber?: number; column?: number };
    const mismatch = /^(\S+) doesn't match (\S+)/.exec(message);
    if (mismatch && known.lineNumber !== undefined)
      return new TemplateError(
        field,
        positionIn(rewrite, known.lineNumber, known.column ?? 0),
        `{{#${mismatch[1]}}} is closed by {{/${mismatch[2]}}}`,
      );
    if (err instanceof RangeError) return new TemplateError(field, null, 'the template is nested too deeply to read');
    const at = lastParseErrorPosition();
    const got = /got '([A-Z_]+)'/.exec(message)?.[1];
    const what = /^Lexical error/.test(message) ? TOKENS.INVALID : got ? (TOKENS[got] ?? `\`${got}\``) : null;
    // A template is at most MAX_TAGS tags nested MAX_NESTING deep (syntax.ts), so the parser never recurses this
    // far; kept so that no input can turn a parse into a 500.
    return new TemplateError(
      field,
      at && positionIn(rewrite, at.line, at.column),
      what ? `syntax error: unexpected ${what}` : 'syntax error',
    );
  }
}
