import { startPlatform } from '../test/helpers/platform.ts';
import { startEntry } from '../test/helpers/processes.ts';
import { readFileSync } from 'node:fs';
const p = await startPlatform();
const w = startEntry('worker/main.ts', { ...p.config, NODE_ENV: 'production' } as any);
await w.logged('worker.started', 60000);
await new Promise((r) => setTimeout(r, 3000));
console.log(readFileSync(`/proc/${w.pid}/status`, 'utf8').split('\n').filter((l) => /VmRSS|VmHWM/.test(l)).join(' '));
await w.stop(); await p.close();
