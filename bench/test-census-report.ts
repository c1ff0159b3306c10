// Summarises a test census (bench/test-census-hook.mjs): the test files' own CPU and their reaped children's, the
// files that cost most, and the other node processes by command. docs/testing.md says how to take one.
//
//   npx tsx bench/test-census-report.ts /tmp/census.log [rows]
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface Line {
  pid: number;
  ppid: number;
  file: string | null;
  argv: string;
  start: number;
  end: number;
  user: number;
  system: number;
  childUser: number;
  childSystem: number;
}

const [logFile, rowsArg] = process.argv.slice(2);
if (!logFile) {
  console.error('usage: npx tsx bench/test-census-report.ts <census log> [rows]');
  process.exit(2);
}
const lines: Line[] = readFileSync(logFile, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l));
const own = (l: Line) => l.user + l.system;
const children = (l: Line) => l.childUser + l.childSystem;
const files = lines.filter((l) => l.file).sort((a, b) => own(b) + children(b) - (own(a) + children(a)));
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const s = (x: number) => x.toFixed(1);
const first = Math.min(...files.map((f) => f.start));
const last = Math.max(...files.map((f) => f.end));
const owns = files.map(own).sort((a, b) => a - b);

console.log(`test files: ${files.length}, from the first start to the last end ${s((last - first) / 1000)} s`);
console.log(`CPU s: the files' own ${s(sum(owns))} (median ${s(owns[owns.length >> 1] ?? 0)}), their reaped`);
console.log(`children ${s(sum(files.map(children)))}; PostgreSQL's and daemons' (not reaped by a file) not counted`);
console.log('\n| file | wall s | own CPU s | children CPU s |\n| --- | --- | --- | --- |');
for (const f of files.slice(0, Number(rowsArg ?? 30)))
  console.log(`| ${path.basename(f.file!)} | ${s((f.end - f.start) / 1000)} | ${s(own(f))} | ${s(children(f))} |`);

const byCommand = new Map<string, { cpu: number; n: number }>();
for (const l of lines.filter((x) => !x.file)) {
  const command = l.argv.split(' ')[0].replace(/^.*\/(dist-test|dist|node_modules)\//, '$1/');
  const seen = byCommand.get(command) ?? { cpu: 0, n: 0 };
  byCommand.set(command, { cpu: seen.cpu + own(l), n: seen.n + 1 });
}
console.log('\n| other node processes (own CPU) | processes | CPU s |\n| --- | --- | --- |');
for (const [command, { cpu, n }] of [...byCommand].sort((a, b) => b[1].cpu - a[1].cpu).slice(0, 15))
  console.log(`| ${command} | ${n} | ${s(cpu)} |`);
