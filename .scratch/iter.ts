import { Readable } from 'node:stream';
import { csvParser } from '../shared/imports/parse.ts';
const N = 1_000_000;
const lines = ['email,first_name,last_name'];
for (let i = 0; i < N; i++) lines.push(`u${i}@d${i % 97}.bench.test,Ann,Lee${i % 1000}`);
const buf = Buffer.from(lines.join('\n') + '\n');
const chunks: Buffer[] = []; for (let i = 0; i < buf.length; i += 256 * 1024) chunks.push(buf.subarray(i, i + 256 * 1024));
for (let round = 0; round < 2; round++) {
  let t = performance.now(); let n = 0;
  for await (const r of Readable.from(chunks).pipe(csvParser())) n++;
  console.log('for await', Math.round(performance.now() - t));
  t = performance.now(); n = 0;
  await new Promise<void>((res) => { const p = Readable.from(chunks).pipe(csvParser()); p.on('data', () => n++); p.on('end', res); });
  console.log('data events', Math.round(performance.now() - t));
  t = performance.now(); n = 0;
  await new Promise<void>((res) => { const p = Readable.from(chunks).pipe(csvParser()); p.on('readable', () => { let r; while ((r = p.read()) !== null) n++; }); p.on('end', res); });
  console.log('readable/read', Math.round(performance.now() - t));
}
