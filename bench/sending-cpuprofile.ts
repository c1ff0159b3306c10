// Summarises a .cpuprofile (bench/sending-profile.ts writes them): self time by package or project file, the
// heaviest functions by self time, and the inclusive time of functions whose name matches a pattern.
//
//   npx tsx bench/sending-cpuprofile.ts <file.cpuprofile> [inclusive-name-regex]
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
  hitCount?: number;
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, pattern] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Time per sample: the delta that follows it.
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0) / 1000));
const total = [...self.values()].reduce((a, b) => a + b, 0);

function where(url: string): string {
  if (!url) return '(native/vm)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  if (url.startsWith('node:')) return url;
  return url.replace(/^.*\/work\/main\//, '');
}

const top = (m: Map<string, number>, k: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([name, ms]) => `${ms.toFixed(0).padStart(7)} ms ${((ms / total) * 100).toFixed(1).padStart(5)} %  ${name}`)
    .join('\n');

const byWhere = new Map<string, number>();
const byFn = new Map<string, number>();
for (const [id, ms] of self) {
  const n = byId.get(id)!;
  const w =
    n.callFrame.functionName === '(garbage collector)' ||
    n.callFrame.functionName === '(idle)' ||
    n.callFrame.functionName === '(program)'
      ? n.callFrame.functionName
      : where(n.callFrame.url);
  byWhere.set(w, (byWhere.get(w) ?? 0) + ms);
  const fn = `${n.callFrame.functionName || '(anonymous)'} ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
  byFn.set(fn, (byFn.get(fn) ?? 0) + ms);
}
console.log(
  `sampled ${total.toFixed(0)} ms over ${((profile.endTime - profile.startTime) / 1000).toFixed(0)} ms\n\nself time by package or file:`,
);
console.log(top(byWhere, 30));
console.log('\nself time by function:');
console.log(top(byFn, 40));

if (pattern) {
  // Inclusive: a sample counts once for each matching function on its stack (recursion counted once).
  const re = new RegExp(pattern);
  const incl = new Map<string, number>();
  for (const [id, ms] of self) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)!;
      const name = `${n.callFrame.functionName || '(anonymous)'} ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
      if (re.test(name) && !seen.has(name)) {
        seen.add(name);
        incl.set(name, (incl.get(name) ?? 0) + ms);
      }
    }
  }
  console.log(`\ninclusive time of functions matching /${pattern}/:`);
  console.log(top(incl, 40));
}
