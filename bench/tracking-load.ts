// The loads of the tracking suite (bench/tracking.ts): tracked and untracked sends through the real api and mta to
// smtp-sink with the mta's CPU per message, and a stream of pixel and link hits on the api's tracking listener.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { checkDomain } from '../shared/domains/verify.ts';
import { createResolver } from '../shared/dns/resolver.ts';
import { loadConfig } from '../shared/config.ts';
import { clickToken, domainKey, openToken } from '../shared/tracking/tokens.ts';
import { cpuOf } from './proc.ts';
import { USER_AGENT } from './load.ts';
import { RECIPIENT_DOMAIN, SENDER_DOMAIN, type Ours } from './sending-ours.ts';
import type { Sink } from './sending-peers.ts';
import { repoRoot } from './servers.ts';
// Type only (erased): tracking-hits.ts is the generator's process, never loaded here.
import type { HitResult } from './tracking-hits.ts';

export const TRACKED_DOMAIN = 'bench-tracked.test';
export const BROWSER =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

/** A 10 KB HTML body with ten links and a text part, as a newsletter has them. */
export function newsletter(tag: string): { html: string; text: string } {
  const links = Array.from(
    { length: 10 },
    (_, i) => `<p>Item ${i}: <a href="https://shop.example.test/item/${i}?utm_source=mail&amp;c=${tag}">see it</a></p>`,
  ).join('\n');
  const filler = '<p>The quick brown fox jumps over the lazy dog and the benchmark keeps typing.</p>\n';
  const html = `<html><body><h1>News ${tag}</h1>\n${links}\n${filler.repeat(110)}</body></html>`;
  return { html, text: `News ${tag}: https://shop.example.test/` };
}

/** TRACKED_DOMAIN created through the api with open and click tracking, verified against the loopback DNS. */
export async function trackedDomain(ours: Ours, env: Record<string, string>): Promise<string> {
  const res = await fetch(`${ours.api.url}/domains`, {
    method: 'POST',
    headers: { 'user-agent': USER_AGENT, authorization: `Bearer ${ours.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: TRACKED_DOMAIN, region: 'us-east-1', open_tracking: true, click_tracking: true }),
  });
  const domain = (await res.json()) as { id: string; records: { type: string; name: string; value: string }[] };
  if (res.status !== 201) throw new Error(`POST /domains answered ${res.status}: ${JSON.stringify(domain)}`);
  for (const r of domain.records) {
    const name = r.name === '@' ? TRACKED_DOMAIN : `${r.name}.${TRACKED_DOMAIN}`;
    if (r.type === 'MX') ours.dns.set(name, 'MX', [{ exchange: r.value, priority: 10 }]);
    else if (r.type === 'TXT') ours.dns.set(name, 'TXT', [r.value]);
  }
  const config = loadConfig(env);
  await checkDomain(ours.db, createResolver({ servers: [ours.dns.address] }), config, domain.id);
  // Sending needs the SPF and DKIM records only; the Tracking CNAME is the proxy's business, not the bench's.
  return domain.id;
}

export interface CpuRun {
  tracked: boolean;
  messages: number;
  /** The mta's CPU per delivered message, ms. */
  cpuMs: number;
  seconds: number;
}

/** `n` newsletters from the tracked or the untracked domain, each to one recipient; the mta's CPU until delivered. */
export async function deliverRound(
  ours: Ours,
  sink: Sink,
  n: number,
  tracked: boolean,
  drainMs: number,
): Promise<CpuRun> {
  const tag = randomBytes(4).toString('hex');
  const { html, text } = newsletter(tag);
  const target = sink.count() + n;
  const cpu0 = cpuOf(ours.mta.pid);
  const t0 = performance.now();
  let i = 0;
  const r = await autocannon({
    url: `${ours.api.url}/emails`,
    connections: 10,
    amount: n,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        headers: { 'user-agent': USER_AGENT, authorization: `Bearer ${ours.key}`, 'content-type': 'application/json' },
        setupRequest: (req: Record<string, unknown>) => ({
          ...req,
          body: JSON.stringify({
            from: `News <news@${tracked ? TRACKED_DOMAIN : SENDER_DOMAIN}>`,
            to: [`reader-${tag}-${i}@${RECIPIENT_DOMAIN}`],
            subject: `News ${tag} ${i++}`,
            html,
            text,
          }),
        }),
      },
    ],
  } as autocannon.Options);
  if (r['2xx'] !== n) throw new Error(`tracking: ${n - r['2xx']} of ${n} sends refused`);
  if ((await sink.waitFor(target, drainMs)) === undefined)
    throw new Error(`tracking: the sink has ${sink.count()} of ${target} messages after ${drainMs} ms`);
  return {
    tracked,
    messages: n,
    cpuMs: ((cpuOf(ours.mta.pid) - cpu0) * 1000) / n,
    seconds: (performance.now() - t0) / 1000,
  };
}

/**
 * Paths of real recipients' pixels and links on TRACKED_DOMAIN's tracking host, minted as the mta mints them, written
 * to `file` one a line.
 */
export async function hitPaths(ours: Ours, secretsKey: string, domainId: string, file: string): Promise<number> {
  const key = domainKey(Buffer.from(secretsKey, 'base64'), domainId);
  const recipients: string[] = await ours
    .db('email_recipients as r')
    .join('emails as e', 'e.id', 'r.email_id')
    .where('e.domain_id', domainId)
    .pluck('r.id');
  const paths: string[] = [];
  for (const id of recipients) {
    paths.push(`/o/${openToken(key, id)}`);
    for (let l = 0; l < 3; l++)
      paths.push(`/c/${clickToken(key, id, l, `https://shop.example.test/item/${l}?utm_source=mail`)}`);
  }
  await writeFile(file, paths.join('\n'));
  return paths.length;
}

export interface HitRun {
  rate: number;
  requests: number;
  p50: number;
  p99: number;
  max: number;
  bad: number;
  /** How late the generator sent, p99 (ms): its own lag, counted in the latencies. */
  lateP99: number;
  /** Hits sent before the measured ones. */
  warmup: number;
}

/**
 * Hits at `rate` per second for `seconds` on the tracking listener, real recipients' tokens in turn, from a process of
 * its own (bench/tracking-hits.ts, open loop), after two seconds of the same unmeasured (`onWarm` is called then).
 */
export async function hits(
  port: number,
  pathsFile: string,
  rate: number,
  seconds: number,
  onWarm?: () => void,
): Promise<HitRun> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(repoRoot, 'bench/tracking-hits.ts'),
      String(port),
      `links.${TRACKED_DOMAIN}`,
      pathsFile,
      String(rate),
      String(seconds),
      BROWSER,
    ],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 2] },
  );
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    if (out.startsWith('warm\n') && onWarm) {
      onWarm();
      onWarm = undefined;
    }
  });
  await new Promise<void>((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`tracking-hits exited ${code}`)))),
  );
  const r = JSON.parse(out.replace(/^warm\n/, '')) as HitResult;
  return {
    rate: r.ok / r.seconds,
    requests: r.sent,
    p50: r.p50,
    p99: r.p99,
    max: r.max,
    bad: r.bad,
    lateP99: r.lateP99,
    warmup: r.warmup,
  };
}
