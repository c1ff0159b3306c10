import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
const N = 1_000_000;
const lines = ['email,first_name,last_name'];
for (let i = 0; i < N; i++) lines.push(`u${i}@d${i % 97}.bench.test,Ann,Lee${i % 1000}`);
const buf = Buffer.from(lines.join('\n') + '\n');
const chunks: Buffer[] = []; for (let i = 0; i < buf.length; i += 256 * 1024) chunks.push(buf.subarray(i, i + 256 * 1024));
const base = { bom: true, delimiter: ',', record_delimiter: ['\r\n', '\n', '\r'], relax_quotes: true, relax_column_count: true, skip_empty_lines: true, max_record_size: 1 << 20 };
const variants: Record<string, object> = { all: base, defaults: {} };
for (const k of Object.keys(base)) { const v = { ...base } as any; delete v[k]; variants['without ' + k] = v; }
for (const [name, o] of Object.entries(variants)) {
  const t = performance.now(); let n = 0;
  for await (const r of Readable.from(chunks).pipe(parse(o as any))) n++;
  console.log(name.padEnd(30), Math.round(performance.now() - t), 'ms');
}
