// The template engine on its own (shared/templates): the language as docs/templates.md describes it, escaping per
// part, the fallback forms, and the bounds that keep a hostile template or hostile values from costing more than a
// bounded render.
import test from 'ava';
import { compileContent, renderContent, type TemplateContent } from '../shared/templates/compile.ts';
import { MAX_TAGS } from '../shared/templates/syntax.ts';
import type { TemplateVariable, VariableType } from '../shared/templates/variables.ts';
import { ServiceError } from '../shared/errors.ts';
import { TemplateCache } from '../shared/templates/send.ts';

const vars = (spec: Record<string, VariableType>, fallbacks: Record<string, unknown> = {}): TemplateVariable[] =>
  Object.entries(spec).map(([key, type]) => ({
    id: key,
    key,
    type,
    fallback_value: (fallbacks[key] ?? null) as TemplateVariable['fallback_value'],
    created_at: '',
    updated_at: '',
  }));

function render(content: Partial<TemplateContent>, values: Record<string, unknown>) {
  const compiled = compileContent({ subject: null, html: '', text: null, document: null, variables: [], ...content });
  return renderContent(compiled, values);
}

test('html escapes every value (attributes included) unless printed with raw; text and subject never escape', (t) => {
  const variables = vars({ NAME: 'string', BIO: 'string' });
  const hostile = `<img src=x onerror="alert('1')">&`;
  const out = render(
    {
      variables,
      subject: 'To {{{NAME}}}',
      html: '<p title="{{NAME}}">{{{NAME}}}</p>{{{raw BIO}}}',
      text: '{{{NAME}}} / {{{raw BIO}}}',
    },
    { NAME: `${hostile}\r\nBcc: x@y.test`, BIO: '<b>bold</b>' },
  );
  const escaped = '&lt;img src&#x3D;x onerror&#x3D;&quot;alert(&#x27;1&#x27;)&quot;&gt;&amp;';
  t.is(out.html, `<p title="${escaped}\r\nBcc: x@y.test">${escaped}\r\nBcc: x@y.test</p><b>bold</b>`);
  t.is(out.text, `${hostile}\r\nBcc: x@y.test / <b>bold</b>`);
  t.is(out.subject, `To ${hostile} Bcc: x@y.test`, 'a line break in a subject value becomes a space');
});

test("Resend's fallback form, in every place, with characters that mean something to Handlebars", (t) => {
  const variables = vars({ A: 'string', B: 'number', O: 'object' });
  const out = render(
    {
      variables,
      html: '{{{A|Tom & "Jerry" \\ ok}}}|{{B|0}}|{{{raw A|<i>x</i>}}}|{{{O.name|nobody}}}|\\{{{A|literal}}}',
      subject: '{{{A | spaced }}}',
    },
    {},
  );
  t.is(out.html, 'Tom & "Jerry" \\ ok|0|<i>x</i>|nobody|{{{A|literal}}}');
  t.is(out.subject, 'spaced');
  t.is(
    render({ variables, html: '{{{A|x}}}-{{{B|1}}}' }, { A: '', B: 0 }).html,
    '-0',
    'a value given wins, even empty or 0',
  );
});

test('lists, objects and conditions; @index, ../ and @root; values of undeclared keys are ignored', (t) => {
  const variables = vars({ ITEMS: 'list', ORDER: 'object', VIP: 'boolean', CUR: 'string' });
  const html =
    '{{#each ITEMS}}{{@index}}:{{name}}={{price}}{{../CUR}}{{#if @last}}.{{else}},{{/if}}{{/each}}' +
    '{{#with ORDER}} #{{id}} {{@root.CUR}}{{/with}}{{#unless VIP}} regular{{else}} vip{{/unless}}';
  const out = render(
    { variables, html },
    {
      ITEMS: [
        { name: 'a', price: 1 },
        { name: '<b>', price: 2 },
      ],
      ORDER: { id: 7 },
      VIP: false,
      CUR: '€',
      OTHER: 'x',
    },
  );
  t.is(out.html, '0:a=1€,1:&lt;b&gt;=2€. #7 € regular');
});

test('nothing reaches a prototype: such names are refused when written, and values are read as own properties', (t) => {
  const variables = vars({ O: 'object', L: 'list' });
  for (const html of [
    '{{O.constructor}}',
    '{{O.__proto__}}',
    '{{#each L}}{{constructor.name}}{{/each}}',
    '{{O.prototype}}',
    '{{#each L}}{{toString}}{{/each}}',
    '{{#with O}}{{hasOwnProperty}}{{/with}}',
  ]) {
    const err = t.throws(() => render({ variables, html }, {}));
    t.true(err instanceof ServiceError && err.status === 422, html);
  }
  // JSON's "__proto__" is an own key, never the object's prototype: nothing is inherited from it.
  const polluted = JSON.parse('{"__proto__": {"secret": "inherited"}, "name": "own"}');
  t.is(render({ variables, html: '{{#each L}}{{name}}{{secret}}{{/each}}' }, { L: [polluted] }).html, 'own');
});

test('bounds: nesting, tags, loop passes and output size', (t) => {
  const variables = vars({ L: 'list', S: 'string', B: 'boolean' });
  const deep = '{{#if B}}'.repeat(13) + 'x' + '{{/if}}'.repeat(13);
  t.regex(t.throws(() => render({ variables, html: deep }, {}))!.message, /nested more than 12 deep/);
  t.regex(
    t.throws(() => render({ variables, html: '{{S}}'.repeat(MAX_TAGS + 1) }, {}))!.message,
    /more than 1000 tags/,
  );
  const loops = '{{#each L}}{{#each ../L}}{{#each ../../L}}x{{/each}}{{/each}}{{/each}}';
  const err = t.throws(() => render({ variables, html: loops }, { L: Array.from({ length: 50 }, (_, i) => i) }));
  t.like((err as ServiceError).toBody(), { statusCode: 422, errors: [{ path: 'template.variables' }] });
  t.regex(err!.message, /loops would run more than 100000 steps/);
  // Few passes, but a long body: the steps count its statements.
  const wide = `{{#each L}}${'{{#if ../B}}x{{/if}}'.repeat(150)}{{/each}}`;
  const items = Array.from({ length: 1000 }, (_, i) => i);
  t.regex(t.throws(() => render({ variables, html: wide }, { L: items, B: true }))!.message, /100000 steps/);
  t.is(render({ variables, html: wide }, { L: items.slice(0, 300), B: true }).html.length, 300 * 150);
  const big = '{{S}}'.repeat(200);
  const tooBig = t.throws(() => render({ variables, html: big }, { S: 'x'.repeat(100_000) }));
  t.regex(tooBig!.message, /output would be larger than 10 MB/);
});

test('positions: line and column in the text as written, after fallbacks changed lengths', (t) => {
  const variables = vars({ A: 'string' });
  const err = t.throws(() => render({ variables, html: 'one\n{{{A|first}}} {{{A|second fallback}}} {{B}}' }, {}));
  t.like((err as ServiceError).toBody().details, { field: 'html', line: 2, column: 41 });
  t.regex(err!.message, /`B` is not a variable of this template/);
});

test('the compiled-version cache drops the least recently used past its count or its characters', (t) => {
  const compiled = (html: string) => compileContent({ subject: null, html, text: null, document: null, variables: [] });
  const cache = new TemplateCache(2, 1000);
  cache.set('a', compiled('a'));
  cache.set('b', compiled('b'));
  t.truthy(cache.get('a'), 'a is now the most recently used');
  cache.set('c', compiled('c'));
  t.deepEqual([cache.get('a') && 'a', cache.get('b') && 'b', cache.get('c') && 'c'], ['a', undefined, 'c']);
  cache.set('big', compiled('x'.repeat(1000)));
  t.is(cache.size, 1, 'over the characters: only the newest stays');
  t.truthy(cache.get('big'));
});
