// The templates suite of `npm run bench` (bench/README.md, "The templates suite"): how many renders a second one core
// does of a published template with 10 variables, the target (5,000/s) as a PASS/FAIL line. The template is
// created and published for real in a fresh database, then read back the way a send reads it (publishedTemplate:
// the version compiled once and cached); each render binds a send's values and fills subject, html and text, on this
// process's one thread. Also: the same for a block document (MJML's HTML, larger), the send path's lookup with its
// query, and what is paid once (the MJML render when written, the compile at a version's first send).
import { cpus } from 'node:os';
import { createDb } from '../shared/db/knex.ts';
import { createTeamWithKey } from '../shared/cli/commands.ts';
import { createTestDatabase } from '../test/helpers/db.ts';
import { createTemplate, publishTemplate, type TemplateInput } from '../shared/templates/templates.ts';
import { applyTemplate, publishedTemplate, TemplateCache } from '../shared/templates/send.ts';
import { compileContent, renderContent } from '../shared/templates/compile.ts';
import { bindValues } from '../shared/templates/variables.ts';
import { fixed, renderTable } from './table.ts';

export const RENDERS_PER_SECOND_TARGET = 5000;

export interface TemplateBenchOptions {
  seconds: number;
  onCleanup(step: () => Promise<unknown>): void;
}

const KEYS = ['FIRST', 'LAST', 'ORDER', 'TOTAL', 'CURRENCY', 'DATE', 'CITY', 'CARRIER', 'TRACKING', 'VIP'];
const variables: TemplateInput['variables'] = [
  ...KEYS.slice(0, 3).map((key) => ({ key, type: 'string' as const })),
  { key: 'TOTAL', type: 'number' as const },
  ...KEYS.slice(4, 9).map((key) => ({ key, type: 'string' as const, fallback_value: 'n/a' })),
  { key: 'VIP', type: 'boolean' as const, fallback_value: false },
];
const paragraph = '<p style="margin:0 0 12px;font-family:Helvetica,Arial,sans-serif;font-size:16px;line-height:1.5">';
/** A receipt of about 2 KB of HTML printing each variable, most of them twice. */
const html = [
  '<!doctype html><html><body><table width="100%" cellpadding="0" cellspacing="0"><tr><td>',
  `${paragraph}Hello {{{FIRST}}} {{{LAST}}},</p>`,
  `${paragraph}Thank you for order {{{ORDER}}} of {{{DATE}}}. {{#if VIP}}As a VIP, shipping was on us.{{/if}}</p>`,
  `${paragraph}Total: {{{TOTAL}}} {{{CURRENCY}}}. It ships to {{{CITY}}} with {{{CARRIER}}}: {{{TRACKING}}}.</p>`,
  `${paragraph}${'Questions about order {{{ORDER}}}? Reply to this email, {{{FIRST}}}. '.repeat(20)}</p>`,
  '<p><a href="https://bench-shop.test/orders/{{{ORDER}}}">Your order</a></p></td></tr></table></body></html>',
].join('');
const text =
  'Hello {{{FIRST}}} {{{LAST}}},\nOrder {{{ORDER}}}: {{{TOTAL}}} {{{CURRENCY}}} to {{{CITY}}} ({{{TRACKING}}}).';
const document = {
  preheader: 'Order {{{ORDER}}} is on its way',
  blocks: [
    { id: 'title', type: 'heading' as const, text: 'Hello {{{FIRST}}} {{{LAST}}}' },
    { id: 'body', type: 'text' as const, text: 'Order {{{ORDER}}} of {{{DATE}}}: {{{TOTAL}}} {{{CURRENCY}}}.' },
    { id: 'ship', type: 'text' as const, text: 'It ships to {{{CITY}}} with {{{CARRIER}}}: {{{TRACKING}}}.' },
    { id: 'cta', type: 'button' as const, text: 'Your order', href: 'https://bench-shop.test/orders/{{{ORDER}}}' },
    { id: 'foot', type: 'footer' as const, text: 'Bench Shop, 1 Main St' },
  ],
};

/** A send's values; `i` makes each render's different. */
const values = (i: number) => ({
  FIRST: `Ann${i % 97}`,
  LAST: "O'Neil & <Sons>",
  ORDER: `A-${i}`,
  TOTAL: (i % 1000) + 0.5,
  CURRENCY: 'EUR',
  DATE: '2026-11-27',
  CITY: 'Berlin',
  CARRIER: 'DHL',
  TRACKING: `JD${i}`,
  VIP: i % 2 === 0,
});

/** Renders for `seconds` on this thread; renders/s and µs per render. */
function loop(seconds: number, render: (i: number) => unknown): { renders: number; rps: number; us: number } {
  for (let i = 0; i < 2000; i++) render(i); // warm-up: JIT, the compiled templates' first runs
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  let renders = 0;
  while (performance.now() < until) {
    for (let k = 0; k < 100; k++) render(renders++);
  }
  const ms = performance.now() - started;
  return { renders, rps: (renders / ms) * 1000, us: (ms * 1000) / renders };
}

/** The public URL the rendered document's platform images name (nothing fetches them here). */
const BASE = 'https://postwerk.bench.test';

export async function runTemplateBench(o: TemplateBenchOptions): Promise<boolean> {
  const database = await createTestDatabase();
  o.onCleanup(() => database.drop());
  const db = createDb({ DATABASE_URL: database.url }, { min: 0, max: 2 });
  o.onCleanup(() => db.destroy());
  const { team } = await createTeamWithKey(db, 'Template bench');
  const cache = new TemplateCache();
  const from = 'Shop <shop@bench-shop.test>';
  const subject = 'Order {{{ORDER}}} for {{{FIRST}}}';

  const plain = await createTemplate(db, team.id, { name: 'Receipt', from, subject, html, text, variables }, BASE);
  await publishTemplate(db, team.id, plain.id);
  let started = performance.now();
  const doc = await createTemplate(db, team.id, { name: 'Receipt blocks', from, subject, document, variables }, BASE);
  const mjmlMs = performance.now() - started;
  await publishTemplate(db, team.id, doc.id);

  started = performance.now();
  const { compiled } = await publishedTemplate(db, cache, team.id, plain.id);
  const compileMs = performance.now() - started;
  const { compiled: blocks } = await publishedTemplate(db, cache, team.id, doc.id);
  const render = (c: typeof compiled) => (i: number) =>
    renderContent(c, bindValues(c.content.variables, values(i), c.required, 'bench'));

  const rows = [
    {
      name: 'published html template, 10 variables',
      ...loop(o.seconds, render(compiled)),
      bytes: compiled.content.html.length,
    },
    {
      name: 'published block document, 10 variables',
      ...loop(o.seconds, render(blocks)),
      bytes: blocks.content.html.length,
    },
  ];
  // The send path's own part: the lookup (one query) then the cached version's render, one send at a time.
  let sends = 0;
  const sendStarted = performance.now();
  while (performance.now() - sendStarted < o.seconds * 1000) {
    await applyTemplate(
      db,
      cache,
      team.id,
      { template: { id: plain.id, variables: values(sends++) } },
      { blockFacts: false },
    );
  }
  const sendMs = performance.now() - sendStarted;
  // A version compiled fresh each time (what a cache miss costs).
  started = performance.now();
  for (let i = 0; i < 20; i++) compileContent(compiled.content);
  const freshMs = (performance.now() - started) / 20;

  console.log('');
  console.log(
    `templates: one thread of node ${process.version} on ${cpus()[0]?.model ?? 'unknown cpu'}, ${o.seconds} s each`,
  );
  console.log(
    renderTable(
      ['run', 'renders', 'renders/s', 'µs/render', 'html bytes'],
      [
        ...rows.map((r) => [r.name, r.renders, fixed(r.rps, 0), fixed(r.us, 1), r.bytes]),
        [
          'applyTemplate (its lookup query + render), serial',
          sends,
          fixed((sends / sendMs) * 1000, 0),
          fixed((sendMs * 1000) / sends, 1),
          '-',
        ],
      ],
    ),
  );
  console.log(
    `once per write: MJML render of the document ${fixed(mjmlMs, 1)} ms (the first, cold); once per version and process: compile ${fixed(compileMs, 1)} ms cold, ${fixed(freshMs, 2)} ms warm`,
  );
  const ok = rows[0].rps >= RENDERS_PER_SECOND_TARGET;
  console.log(
    `${ok ? 'PASS' : 'FAIL'} renders of a published template with 10 variables: ${fixed(rows[0].rps, 0)}/s (target ${RENDERS_PER_SECOND_TARGET}/s on one core)`,
  );
  return ok;
}
