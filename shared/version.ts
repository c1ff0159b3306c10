import { readFileSync } from 'node:fs';
import path from 'node:path';
import { root } from './layout.ts';

/** The platform's version, from package.json. */
export const version: string = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version;
