// Reading one part of a template (its subject, html, text, or a block's field) with Handlebars' own parser, and
// checking it before anything is stored or compiled. The language is Handlebars, restricted:
// - `{{{NAME}}}` or `{{NAME}}` prints a declared variable (`{{{ORDER.total}}}` a field of an object variable);
//   Resend's fallback form `{{{NAME|fallback}}}` is translated into a call of the engine's `_v` helper with the
//   fallback's index in a table (never into a Handlebars string literal, so no fallback text can change the parse);
// - `{{{raw NAME}}}` prints a value unescaped in html (every other print is HTML-escaped there, engine.ts);
// - blocks `{{#if}}`, `{{#unless}}`, `{{#each}}` (a list or an object), `{{#with}}` (an object), with `{{else}}`;
// - nothing else: no partials, decorators, sub-expressions, literals as values or helpers of our own beyond these.
// A variable printed outside `{{#each}}`/`{{#with}}` must be declared and of a printable type. What is printed
// with no fallback (and not under an `{{#if}}` of it) is required at send time. `{{{RESEND_UNSUBSCRIBE_URL}}}`
// stays in the output as written: the per-recipient unsubscribe link is filled later, as for any send.
import Handlebars from 'handlebars';
import type { VariableType } from './variables.ts';
import { TemplateError, positionIn, rewriteFallbacks, type Rewrite } from './positions.ts';

type Program = hbs.AST.Program;
type Statement = hbs.AST.Statement;
type Path = hbs.AST.PathExpression;

export const UNSUBSCRIBE_PLACEHOLDER = '{{{RESEND_UNSUBSCRIBE_URL}}}';
/** Blocks inside blocks, at most. */
export const MAX_NESTING = 12;
/**
 * Tags (`{{`) in one part, at most. Handlebars' parser and compiler cost grows with the tags (a few hundred ms for a
 * thousand on a loaded 2-core machine): a bound on the cost of a write, and of a version's first send.
 */
export const MAX_TAGS = 1000;
const OUTPUT_HELPERS = new Set(['_v', 'raw']);
const BLOCK_HELPERS = new Set(['if', 'unless', 'each', 'with']);
const LOOP_DATA = new Set(['index', 'key', 'first', 'last']);
/** Names an object inherits (`constructor`, `toString`, `__proto__`, ...) are never a value's own: refused. */
const forbidden = (segment: string) =>
  segment.startsWith('__') || segment === 'prototype' || segment in Object.prototype;

export interface ParsedPart {
  /** The checked program, every print turned into a call of `_v` or `raw`: what engine.ts compiles. */
  program: Program;
  /** Inline fallbacks by index, as written in the template. */
  fallbacks: string[];
  /** Declared variables printed with no inline fallback and no `{{#if}}` around them. */
  required: Set<string>;
  /** Declared variables the part uses at all. */
  referenced: Set<string>;
}

interface Scope {
  /** Context-changing blocks (`each`, `with`) around this point: `../` climbs one of them. */
  depth: number;
  /** Blocks of any kind around this point. */
  nesting: number;
  loops: number;
  /** Root variables an enclosing `{{#if}}` (or `{{else}}` of an `{{#unless}}`) has tested. */
  guarded: ReadonlySet<string>;
}

interface Walk {
  field: string;
  source: string;
  rewrite: Rewrite;
  declared: ReadonlyMap<string, VariableType>;
  fallbacks: string[];
  required: Set<string>;
  referenced: Set<string>;
}

function fail(w: Walk, node: hbs.AST.Node | null, message: string): never {
  const at = node?.loc ? positionIn(w.rewrite, node.loc.start.line, node.loc.start.column) : null;
  throw new TemplateError(w.field, at, message);
}

/** A path's root variable when it resolves at the template's root; null when it names a loop's item. */
function rootOf(w: Walk, path: Path, scope: Scope): { name: string; rest: string[] } | null {
  if (path.parts.some(forbidden)) fail(w, path, `\`${path.original}\` is not a variable name`);
  if (path.data) {
    const [head, ...rest] = path.parts;
    if (head === 'root' && rest.length > 0) return { name: rest[0], rest: rest.slice(1) };
    if (LOOP_DATA.has(head) && rest.length === 0 && scope.loops > 0) return null;
    fail(w, path, `\`${path.original}\` is not available here (only @index, @key, @first, @last inside {{#each}})`);
  }
  if (path.depth > scope.depth) fail(w, path, `\`${path.original}\` climbs above the template with ../`);
  if (path.depth < scope.depth) return null;
  if (path.parts.length === 0) fail(w, path, 'print a variable by its name, not `this`, outside {{#each}}');
  return { name: path.parts[0], rest: path.parts.slice(1) };
}

type Use = 'print' | 'if' | 'each' | 'with';

/** Checks a path used as `use`; answers its root variable (null inside a loop's item). */
function checkPath(w: Walk, path: hbs.AST.Expression, scope: Scope, use: Use): string | null {
  if (path.type !== 'PathExpression') fail(w, path, 'only a variable can be printed or tested here, not a literal');
  const root = rootOf(w, path as Path, scope);
  if (!root) return null;
  const type = w.declared.get(root.name);
  const original = (path as Path).original;
  if (!type) fail(w, path, `\`${root.name}\` is not a variable of this template (declare it in \`variables\`)`);
  w.referenced.add(root.name);
  if (root.rest.length > 0 && type !== 'object')
    fail(w, path, `\`${root.name}\` is a ${type}: it has no field \`${root.rest.join('.')}\``);
  if (root.rest.length > 0) return root.name;
  if (use === 'print' && type === 'object')
    fail(w, path, `\`${original}\` is an object: print one of its fields, such as \`${original}.name\``);
  if (use === 'print' && type === 'list') fail(w, path, `\`${original}\` is a list: loop over it with {{#each}}`);
  if (use === 'each' && type !== 'list' && type !== 'object')
    fail(w, path, `{{#each}} needs a list or an object; \`${original}\` is a ${type}`);
  if (use === 'with' && type !== 'object') fail(w, path, `{{#with}} needs an object; \`${original}\` is a ${type}`);
  return root.name;
}

function helperPath(name: string, loc: hbs.AST.SourceLocation): Path {
  return { type: 'PathExpression', data: false, depth: 0, parts: [name], original: name, loc };
}

/** A print: `{{X}}` becomes `{{_v X}}`; `{{_v X i}}` (a translated fallback) and `{{raw X [i]}}` are checked. */
function mustache(w: Walk, node: hbs.AST.MustacheStatement, scope: Scope): Statement {
  if (node.path.type !== 'PathExpression') fail(w, node, 'only a variable can be printed, not a literal');
  const path = node.path as Path;
  if (node.hash?.pairs?.length) fail(w, node, `\`${path.original}\` takes no name=value arguments`);
  if (node.params.length === 0 && path.original === 'RESEND_UNSUBSCRIBE_URL' && !path.data)
    return {
      type: 'ContentStatement',
      value: UNSUBSCRIBE_PLACEHOLDER,
      original: UNSUBSCRIBE_PLACEHOLDER,
      loc: node.loc,
    } as Statement;
  let params = node.params;
  if (params.length === 0) params = [path];
  else if (!OUTPUT_HELPERS.has(path.original) || path.data || path.depth > 0)
    fail(w, node, `unknown helper \`${path.original}\`: only raw, #if, #unless, #each and #with are available`);
  if (params.length > 2) fail(w, node, `\`${path.original}\` takes one variable`);
  const index = params[1] as hbs.AST.NumberLiteral | undefined;
  const known = (i: hbs.AST.NumberLiteral) => Number.isInteger(i.value) && i.value >= 0 && i.value < w.fallbacks.length;
  if (index && (index.type !== 'NumberLiteral' || !known(index)))
    fail(w, node, `\`${path.original}\` takes one variable`);
  const name = checkPath(w, params[0], scope, 'print');
  if (name && !index && !scope.guarded.has(name)) w.required.add(name);
  const helper = params === node.params ? path.original : '_v';
  return { ...node, path: helperPath(helper, path.loc), params } as Statement;
}

function block(w: Walk, node: hbs.AST.BlockStatement, scope: Scope): Statement {
  const name = node.path.original;
  if (!BLOCK_HELPERS.has(name) || node.path.data || node.path.depth > 0 || node.path.parts.length !== 1)
    fail(w, node, `unknown block \`{{#${name}}}\`: only #if, #unless, #each and #with are available`);
  if (node.params.length !== 1 || node.hash?.pairs?.length) fail(w, node, `{{#${name}}} takes exactly one variable`);
  if (scope.nesting >= MAX_NESTING) fail(w, node, `blocks are nested more than ${MAX_NESTING} deep`);
  const use: Use = name === 'unless' ? 'if' : (name as Use);
  const root = checkPath(w, node.params[0], scope, use);
  const inner = { ...scope, nesting: scope.nesting + 1 };
  const guard = (on: boolean) => (on && root ? { ...inner, guarded: new Set([...scope.guarded, root]) } : inner);
  const enters = name === 'each' || name === 'with';
  const body = enters
    ? { ...inner, depth: scope.depth + 1, loops: scope.loops + (name === 'each' ? 1 : 0) }
    : guard(name === 'if');
  return {
    ...node,
    ...(name === 'each' ? { hash: loopWeight(node) } : {}),
    program: node.program && program(w, node.program, body),
    inverse: node.inverse && program(w, node.inverse, guard(name === 'unless')),
  } as Statement;
}

/** Statements in a program, those of nested blocks included. */
function statements(p: Program | undefined): number {
  if (!p) return 0;
  return p.body.reduce((n, s) => {
    const b = s as Partial<hbs.AST.BlockStatement>;
    return n + 1 + (s.type === 'BlockStatement' ? statements(b.program) + statements(b.inverse) : 0);
  }, 0);
}

/**
 * `_w=<statements of the body>` for {{#each}}: what one pass costs the render's budget (engine.ts). The user's own
 * hash is refused above, so this is the only one.
 */
function loopWeight(node: hbs.AST.BlockStatement): hbs.AST.Hash {
  const weight = statements(node.program);
  const value = { type: 'NumberLiteral', value: weight, original: weight, loc: node.loc } as hbs.AST.NumberLiteral;
  return { type: 'Hash', pairs: [{ type: 'HashPair', key: '_w', value, loc: node.loc }], loc: node.loc };
}

function statement(w: Walk, node: Statement, scope: Scope): Statement {
  switch (node.type) {
    case 'ContentStatement':
    case 'CommentStatement':
      return node;
    case 'MustacheStatement':
      return mustache(w, node as hbs.AST.MustacheStatement, scope);
    case 'BlockStatement':
      return block(w, node as hbs.AST.BlockStatement, scope);
    case 'PartialStatement':
    case 'PartialBlockStatement':
      return fail(w, node, 'partials ({{> name}}) are not available');
    default:
      return fail(w, node, 'decorators ({{* ...}}) are not available');
  }
}

function program(w: Walk, p: Program, scope: Scope): Program {
  return { ...p, body: p.body.map((s) => statement(w, s, scope)) };
}

/**
 * The tags counted and the nesting of block tags followed, before Handlebars parses: a deep nesting would make its
 * parser recurse, and many tags make it slow. Only `{{#`, `{{^` (not `{{^}}`, an else) and `{{/` are looked at.
 */
function checkBounds(field: string, source: string): void {
  let tags = 0;
  let depth = 0;
  for (const m of source.matchAll(/\{\{~?\s*([#^/]?)(\s*\}?)/g)) {
    if (++tags > MAX_TAGS) throw new TemplateError(field, null, `more than ${MAX_TAGS} tags`);
    const kind = m[1];
    if (kind === '/') depth--;
    else if ((kind === '#' || kind === '^') && m[2].trim() !== '}' && ++depth > MAX_NESTING) {
      const before = source.slice(0, m.index);
      const at = { line: before.split('\n').length, column: m.index - before.lastIndexOf('\n') };
      throw new TemplateError(field, at, `blocks are nested more than ${MAX_NESTING} deep`);
    }
  }
}

/**
 * Parses and checks one part; throws a TemplateError (a 422 naming `field`, the line and the column) for a syntax
 * error, an unknown helper or variable, a partial, or a print the variable's type does not allow.
 */
export function parsePart(field: string, source: string, declared: ReadonlyMap<string, VariableType>): ParsedPart {
  checkBounds(field, source);
  const rewrite = rewriteFallbacks(source);
  const w: Walk = {
    field,
    source,
    rewrite,
    declared,
    fallbacks: rewrite.fallbacks,
    required: new Set(),
    referenced: new Set(),
  };
  let parsed: Program;
  try {
    parsed = Handlebars.parse(rewrite.text) as Program;
  } catch (err) {
    throw TemplateError.fromParse(field, rewrite, err);
  }
  const checked = program(w, parsed, { depth: 0, nesting: 0, loops: 0, guarded: new Set() });
  return { program: checked, fallbacks: w.fallbacks, required: w.required, referenced: w.referenced };
}
