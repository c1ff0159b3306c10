import { runDomainBench } from './domains.ts';
import { stopAllServers } from './servers.ts';
const undo: Array<() => Promise<unknown>> = [];
let ok = false;
try {
  ok = await runDomainBench({ creations: Number(process.env.N ?? 50), verifications: Number(process.env.M ?? 200), redisUrl: 'redis://127.0.0.1:6379', onCleanup: (s) => undo.push(s) });
} catch (e) { console.error(e); }
finally { await stopAllServers(); for (const s of undo.reverse()) await s().catch((e) => console.error('cleanup', e)); }
process.exit(ok ? 0 : 1);
