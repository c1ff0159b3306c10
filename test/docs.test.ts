// The README is the front door and the docs stay true to the code: a README under 12 KB, every link inside the
// repository and to a file that exists, every variable shared/config.ts reads in the configuration table and in
// .env.example, and a LICENSE that is the license the OpenAPI document states.
import test from 'ava';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { configSchema } from '../shared/config.ts';
import { openApiDocument } from '../api/routes/index.ts';
import { root } from '../shared/layout.ts';

const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const markdown = ['README.md', 'CONTEXT.md', 'mta/README.md', 'inbound/README.md', 'bench/README.md'].concat(
  readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
);

test('the README is under 12 KB', (t) => {
  const size = statSync(path.join(root, 'README.md')).size;
  t.true(size < 12 * 1024, `README.md is ${size} bytes`);
});

test('every markdown link stays in the repository and names a file that exists', (t) => {
  for (const file of markdown.filter((f) => existsSync(path.join(root, f)))) {
    for (const [, target] of read(file).matchAll(/\]\(([^)\s]+)\)/g)) {
      t.false(/^[a-z][a-z0-9+.-]*:/i.test(target), `${file}: ${target} leaves the repository`);
      const [target_path] = target.split('#');
      if (!target_path) continue; // an anchor in the same file
      t.true(existsSync(path.resolve(root, path.dirname(file), target_path)), `${file}: ${target} does not exist`);
    }
  }
});

test('the configuration table and .env.example list exactly the variables shared/config.ts reads', (t) => {
  const variables = Object.keys(configSchema.shape).sort();
  const table = read('docs/configuration.md')
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...l.split('|')[1].matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]));
  t.deepEqual([...new Set(table)].sort(), variables, 'docs/configuration.md');
  const example = read('.env.example');
  for (const v of variables) t.regex(example, new RegExp(`^#? ?${v}=`, 'm'), `.env.example lacks ${v}`);
});

test('LICENSE is the license the OpenAPI document and package.json state', (t) => {
  const info = openApiDocument('http://127.0.0.1').info as { license: { identifier: string } };
  const pkg = JSON.parse(read('package.json')) as { license: string };
  t.is(info.license.identifier, 'MIT');
  t.is(pkg.license, info.license.identifier);
  t.regex(read('LICENSE'), /^MIT License\n/);
});
