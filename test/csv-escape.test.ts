// The CSV writer every export is to use (shared/csv/escape.ts): formula-like text made inert, RFC 4180 quoting, and
// what it writes read back by the same parser the imports use.
import test from 'ava';
import { parse } from 'csv-parse/sync';
import { csvField, csvRow } from '../shared/csv/escape.ts';
import { csvOptions } from '../shared/imports/parse.ts';

test('text a spreadsheet would run as a formula gets a leading quote', (t) => {
  for (const formula of ["=cmd|' /C calc'!A0", '+SUM(A1:A9)', '-2+3', '@NOW()', '\t=1', '\r=1'])
    t.is(csvField(formula).replace(/^"|"$/g, '')[0], "'", formula);
  t.is(csvField('=1+1'), "'=1+1");
  t.is(csvField('Ann'), 'Ann');
  t.is(csvField('a=b'), 'a=b', 'only a leading sign counts');
  t.is(csvField(-2.5), '-2.5', 'a number is not a formula');
  t.is(csvField(true), 'true');
  t.is(csvField(null), '');
});

test('fields are quoted as RFC 4180 says, and read back as written', (t) => {
  t.is(csvField('a,b'), '"a,b"');
  t.is(csvField('say "hi"'), '"say ""hi"""');
  t.is(csvField('two\nlines'), '"two\nlines"');
  const row = csvRow(['x@example.com', '=HYPERLINK("http://evil")', 'a,"b"\nc', -1, null]);
  t.true(row.endsWith('\r\n'));
  const [back] = parse(row, csvOptions) as string[][];
  t.deepEqual(back, ['x@example.com', `'=HYPERLINK("http://evil")`, 'a,"b"\nc', '-1', '']);
});
