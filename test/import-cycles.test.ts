// The code's import graph has no cycles (type-only imports included: a cycle of types is still two files that
// each need the other). Read from the sources themselves: every relative import of every .ts file.
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { root as ROOT } from '../shared/layout.ts';

const FOLDERS = ['api', 'mta', 'inbound', 'worker', 'shared', 'bench'];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found = [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'(\.{1,2}\/[^']+\.ts)'/gm)].map((m) => m[1]);
  return found.map((spec) => resolve(dirname(file), spec));
}

/** Every cycle, each as the files along it (found by depth-first search from each file). */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

test('the import graph finds a cycle when there is one (the check can fail)', (t) => {
  const graph = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a']],
    ['d', ['a']],
  ]);
  t.deepEqual(cycles(graph), [['a', 'b', 'c', 'a']]);
  t.deepEqual(
    cycles(
      new Map([
        ['a', ['b']],
        ['b', []],
      ]),
    ),
    [],
  );
});

test('no file of api/, mta/, inbound/, worker/, shared/ or bench/ imports itself through others', (t) => {
  const files = FOLDERS.flatMap((f) => sources(join(ROOT, f)));
  const graph = new Map(files.map((f) => [f, importsOf(f)]));
  t.true(files.length > 100, `read ${files.length} files`);
  t.true([...graph.values()].flat().length > 300, 'the imports were read');
  const found = cycles(graph).map((c) => c.map((f) => relative(ROOT, f)).join(' → '));
  t.deepEqual(found, []);
});
