// The one template engine: Handlebars, in an environment of its own holding exactly the helpers the language has
// (syntax.ts checks every template against the same list, and compiles with knownHelpersOnly, so nothing else can
// be called): `_v` prints a value, `raw` prints it unescaped, `if`, `unless`, `with`, and `each`, wrapped to count.
// - Escaping is decided here, per part, not by `{{` versus `{{{` (Resend writes every variable `{{{NAME}}}`): in
//   html every value is HTML-escaped (quotes included, so a value is safe in an attribute too) unless printed with
//   `raw`; in text and subject nothing is escaped, and a subject's line breaks become spaces. An inline fallback is
//   template text, written by the template's author, and goes out as written.
// - Rendering is bounded: every printed value and every loop pass is charged to the render's budget; past
//   MAX_RENDER_CHARS of output or MAX_LOOP_STEPS steps the render stops with RenderLimitError. A pass through a
//   loop costs as many steps as its body has statements (syntax.ts writes the count into the block as `_w`), so
//   the bound is on the work done, not only on the passes. A template has no partials, so nothing recurses;
//   loops are the only way to multiply work.
// - Prototype access stays off (Handlebars' default since 4.6): only a value's own properties are read.
import Handlebars from 'handlebars';
import type { ParsedPart } from './syntax.ts';

export const MAX_RENDER_CHARS = 10 * 1024 * 1024;
export const MAX_LOOP_STEPS = 100_000;

export type PartMode = 'html' | 'text' | 'subject';

export class RenderLimitError extends Error {}

/** What one render may still spend. */
export class RenderBudget {
  chars = 0;
  steps = 0;
  charge(chars: number): void {
    this.chars += chars;
    if (this.chars > MAX_RENDER_CHARS)
      throw new RenderLimitError(`the output would be larger than ${MAX_RENDER_CHARS / 1024 / 1024} MB`);
  }
  /** One pass through a loop whose body has `weight` statements. */
  pass(weight: number): void {
    this.steps += Math.max(1, weight);
    if (this.steps > MAX_LOOP_STEPS)
      throw new RenderLimitError(
        `its loops would run more than ${MAX_LOOP_STEPS} steps (a pass through each statement)`,
      );
  }
}

interface RenderState {
  mode: PartMode;
  fallbacks: string[];
  budget: RenderBudget;
}

type Options = Handlebars.HelperOptions & { data: { pw: RenderState } };

const env = Handlebars.create();
env.unregisterHelper('log');
env.unregisterHelper('lookup');

const text = (value: unknown): string =>
  typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);

function printer(raw: boolean) {
  return (...args: unknown[]) => {
    const options = args.pop() as Options;
    const [value, index] = args;
    const state = options.data.pw;
    let out: string;
    if (value === undefined || value === null) {
      out = typeof index === 'number' ? (state.fallbacks[index] ?? '') : '';
    } else {
      out = text(value);
      if (state.mode === 'html' && !raw) out = Handlebars.escapeExpression(out);
      else if (state.mode === 'subject') out = out.replace(/[\r\n]+/g, ' ');
    }
    state.budget.charge(out.length);
    return new Handlebars.SafeString(out);
  };
}
env.registerHelper('_v', printer(false));
env.registerHelper('raw', printer(true));

const builtinEach = env.helpers.each;
env.registerHelper('each', function (this: unknown, context: unknown, options: Options) {
  const budget = options.data.pw.budget;
  const weight = Number(options.hash?._w ?? 1);
  const fn = options.fn;
  const counted = (item: unknown, o?: Handlebars.RuntimeOptions) => {
    budget.pass(weight);
    const out = fn(item, o);
    budget.charge(out.length);
    return out;
  };
  return builtinEach.call(this, context, { ...options, fn: counted });
});

const COMPILE_OPTIONS = {
  knownHelpers: { _v: true, raw: true, if: true, unless: true, each: true, with: true },
  knownHelpersOnly: true,
  data: true,
  preventIndent: true,
  strict: false,
} as const;

export interface CompiledPart {
  mode: PartMode;
  fallbacks: string[];
  render: Handlebars.TemplateDelegate;
}

/** Compiles a checked part (Handlebars builds the function at its first render). */
export function compilePart(part: ParsedPart, mode: PartMode): CompiledPart {
  return { mode, fallbacks: part.fallbacks, render: env.compile(part.program, COMPILE_OPTIONS) };
}

/** Runs Handlebars' compiler over a checked part, so a draft that would not compile is refused when written. */
export function checkCompiles(part: ParsedPart): void {
  env.precompile(part.program, COMPILE_OPTIONS);
}

/** Renders a part with `context` (the send's values, fallbacks applied), charging `budget`. */
export function renderPart(part: CompiledPart, context: Record<string, unknown>, budget: RenderBudget): string {
  const data = { pw: { mode: part.mode, fallbacks: part.fallbacks, budget } satisfies RenderState };
  return part.render(context, { data });
}
