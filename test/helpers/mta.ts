// The world the MTA's tests deliver in: the platform (PostgreSQL, Redis, blobs), a loopback DNS server that
// answers MX and address records, an SMTP sink on SMTP_DELIVERY_PORT, and the delivery stages wired to them
// with short timeouts. When the world closes, every message its sink accepted must carry a DKIM signature of its
// From domain (or of a parent of it, as the managed domains' platform key signs) that mailauth and
// opendkim-testmsg both pass; a test that delivers unsigned on purpose names the recipient with allowUnsigned.
import { promises as dnsPromises } from 'node:dns';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { startPlatform, type Platform, type TestTeam } from './platform.ts';
import { startDnsServer, type DnsServer } from './dns-server.ts';
import { startSmtpSink, type SinkMessage, type SinkOptions, type SmtpSink } from './smtp-sink.ts';
import { opendkimVerify, signatureKeys } from './opendkim.ts';
import { createResolver } from '../../shared/dns/resolver.ts';
import { createLogger } from '../../shared/logger.ts';
import { liftSandbox } from '../../shared/teams/teams.ts';
import {
  closeDeliveryDeps,
  createDeliveryDeps,
  type DeliveryDeps,
  type DeliveryOptions,
} from '../../mta/delivery/deps.ts';

export interface MtaWorld {
  p: Platform;
  dns: DnsServer;
  sink: SmtpSink;
  deps: DeliveryDeps;
  /** MX of `domain` → mx.<domain> → `ips` (the sink listens on 127.0.0.1). */
  mx(domain: string, ips?: string[]): void;
  /** `local`@SIMULATOR_DOMAIN: a simulator address (delivered, bounced, complained, ...). */
  sim(local: string): string;
  /** A verified sending domain of `team` with its DKIM key published in the DNS. */
  sendingDomain(team: TestTeam, name: string): Promise<{ id: string; name: string; selector: string }>;
  /**
   * DKIM verdicts of a received message by two verifiers, keys read from the loopback DNS: mailauth's status,
   * which stays `pass` only when opendkim-testmsg (libopendkim) passes the same signature too.
   */
  verifyDkim(raw: Buffer): Promise<{ status: string; domain: string; selector: string }[]>;
  /** Delivery stages with other options (a second mta copy); closed with the world. */
  moreDeps(options?: DeliveryOptions): DeliveryDeps;
  /**
   * Messages to `recipient` may reach the sink without a passing DKIM signature (a test delivers unsigned on
   * purpose); every other message the sink accepted is verified by close(), which throws for any that fails.
   */
  allowUnsigned(recipient: string, why: string): void;
  /**
   * Verifies the DKIM signature of every message the sink accepted (see allowUnsigned), then closes; throws if one
   * failed.
   */
  close(): Promise<void>;
}

/** The domain of the From header's address (RFC 5322 §3.6.2), lower-cased; '' when there is none. */
function fromDomain(raw: Buffer): string {
  const text = raw.toString('latin1');
  const head = text.slice(0, Math.max(0, text.indexOf('\r\n\r\n')));
  const field = head.split(/\r\n(?![ \t])/).find((f) => /^from:/i.test(f)) ?? '';
  const value = field.slice(5).replace(/\r\n[ \t]/g, ' ');
  const address = /<([^>]*)>/.exec(value)?.[1] ?? value;
  return address
    .slice(address.lastIndexOf('@') + 1)
    .trim()
    .toLowerCase();
}

/**
 * A signature of `signer` speaks for mail from `from`: the same domain, or a parent of it (DMARC relaxed alignment).
 */
const alignedWith = (from: string, signer: string) =>
  !!signer && signer.includes('.') && (from === signer || from.endsWith(`.${signer}`));

const FUTURE_REFUSAL = 'pass by mailauth only; opendkim-testmsg: opendkim-testmsg: dkim_eom(): Unable to verify';

/** `<d> <s>` of each DKIM-Signature whose t= is more than libopendkim's 5-minute clock drift ahead of now. */
function futureSigned(raw: Buffer): Set<string> {
  const text = raw.toString('latin1');
  const fields = text
    .slice(0, text.indexOf('\r\n\r\n'))
    .split(/\r\n(?![ \t])/)
    .filter((f) => /^dkim-signature:/i.test(f));
  const ahead = new Set<string>();
  for (const f of fields) {
    const tags = new Map(
      f
        .slice(f.indexOf(':') + 1)
        .replace(/\s+/g, '')
        .split(';')
        .map((t) => [t.slice(0, t.indexOf('=')), t.slice(t.indexOf('=') + 1)]),
    );
    if (Number(tags.get('t')) * 1000 > Date.now() + 300_000)
      ahead.add(`${(tags.get('d') ?? '').toLowerCase()} ${tags.get('s') ?? ''}`);
  }
  return ahead;
}

export const TEST_TIMEOUTS = { connect: 2000, greeting: 2000, socket: 1500, transaction: 5000 };

type DkimVerdict = { status: string; domain: string; selector: string };

/**
 * MtaWorld.verifyDkim with keys read through `verifier` (the loopback DNS): mailauth's verdicts, each `pass` only
 * when opendkim-testmsg passes the same signature too.
 */
function dkimVerifier(verifier: dnsPromises.Resolver) {
  return async (raw: Buffer): Promise<DkimVerdict[]> => {
    const result = await dkimVerify(raw, {
      resolver: (name: string, rrtype: string) => verifier.resolve(name, rrtype) as Promise<string[][]>,
    });
    // opendkim-testmsg gets the same keys from a DNS server of its own (it can only ask port 53).
    const keys = signatureKeys(raw);
    const records: Record<string, string> = {};
    for (const k of keys) {
      const name = `${k.selector}._domainkey.${k.domain}`;
      records[name] =
        (await verifier.resolveTxt(name).catch(() => [] as string[][])).map((chunks) => chunks.join(''))[0] ?? '';
    }
    const opendkim = await opendkimVerify(raw, records);
    return result.results.map((r) => {
      const index = keys.findIndex(
        (k) => k.domain === (r.signingDomain ?? '').toLowerCase() && k.selector === r.selector,
      );
      const other = opendkim[index];
      const status =
        r.status.result === 'pass' && !other?.pass
          ? `pass by mailauth only; opendkim-testmsg: ${other?.output ?? 'no verdict'}`
          : r.status.result;
      return { status, domain: r.signingDomain ?? '', selector: r.selector ?? '' };
    });
  };
}

/** What is wrong with the DKIM of one accepted message, or null when a signature of its From domain passes. */
async function dkimProblem(verifyDkim: MtaWorld['verifyDkim'], m: SinkMessage): Promise<string | null> {
  const from = fromDomain(m.raw);
  const verdicts = await verifyDkim(m.raw);
  const future = futureSigned(m.raw);
  const passes = (v: DkimVerdict) =>
    v.status === 'pass' ||
    // A test that ran the job on a clock moved hours ahead (a retry "later") signs with that time; libopendkim
    // refuses a t= more than its 5-minute clock drift ahead and can say nothing else of it, so mailauth judges alone.
    (v.status === FUTURE_REFUSAL && future.has(`${v.domain.toLowerCase()} ${v.selector}`));
  if (verdicts.some((v) => passes(v) && alignedWith(from, v.domain.toLowerCase()))) return null;
  const seen = verdicts.map((v) => `${v.status} (d=${v.domain} s=${v.selector})`).join('; ') || 'no DKIM-Signature';
  return `message to ${m.to.join(', ')} (From domain ${from || 'missing'}, session ${m.sessionId}): ${seen}`;
}

/**
 * The platform key that signs the managed domains' mail, published as the operator does (`npm run cli --
 * managed-dkim`) unless a test already did.
 */
async function publishPlatformKeys(p: Platform, dns: DnsServer, verifier: dnsPromises.Resolver): Promise<void> {
  const keys: { domain: string; selector: string; public_key: string }[] = await p
    .db('platform_dkim_keys')
    .select('domain', 'selector', 'public_key');
  for (const k of keys) {
    const name = `${k.selector}._domainkey.${k.domain}`;
    const published = await verifier.resolveTxt(name).then(
      (r) => r.length > 0,
      () => false,
    );
    if (!published) dns.set(name, 'TXT', [`v=DKIM1; k=rsa; p=${k.public_key}`]);
  }
}

/** The problems found in `due` (DKIM of each message checked, a few at a time). */
async function dkimProblems(verifyDkim: MtaWorld['verifyDkim'], due: SinkMessage[]): Promise<string[]> {
  const problems: string[] = [];
  let next = 0;
  const lane = async () => {
    while (next < due.length) {
      const m = due[next++];
      const problem = await dkimProblem(verifyDkim, m).catch(
        (err: Error) => `message to ${m.to.join(', ')}: verification failed: ${err.message}`,
      );
      if (problem) problems.push(problem);
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, due.length) }, lane));
  return problems;
}

export async function startMtaWorld(
  options: { sink?: SinkOptions; env?: Record<string, string> } = {},
): Promise<MtaWorld> {
  const sink = await startSmtpSink(options.sink);
  const dns = await startDnsServer();
  const p = await startPlatform({
    DNS_SERVERS: dns.address,
    SMTP_DELIVERY_PORT: String(sink.port),
    MTA_SIGNING_THREADS: '1',
    ...options.env,
  });
  const log = createLogger(p.config, 'mta');
  // Every lookup of the tests is answered (or refused) at once; the budget is for a busy CI machine.
  const resolver = createResolver({ servers: [dns.address], timeoutMs: 2000, tries: 1 });
  const all: DeliveryDeps[] = [];
  const moreDeps = (o: DeliveryOptions = {}) => {
    const d = createDeliveryDeps(
      p.config,
      { db: p.db, blobs: p.deps.blobs, log },
      { timeouts: TEST_TIMEOUTS, dns: resolver, ...o },
    );
    all.push(d);
    return d;
  };
  const deps = moreDeps();
  const verifier = new dnsPromises.Resolver();
  verifier.setServers([dns.address]);
  const verifyDkim = dkimVerifier(verifier);
  const unsigned = new Map<string, string>();

  /** Every accepted message not opted out, verified; the problems found. */
  const checkSink = async (): Promise<string[]> => {
    const due = sink.messages.filter((m) => !m.to.some((a) => unsigned.has(a.toLowerCase())));
    if (due.length === 0) return [];
    await publishPlatformKeys(p, dns, verifier);
    return dkimProblems(verifyDkim, due);
  };

  return {
    p,
    dns,
    sink,
    deps,
    moreDeps,
    verifyDkim,
    sim: (local) => `${local}@${p.config.SIMULATOR_DOMAIN}`,
    mx(domain, ips = ['127.0.0.1']) {
      dns.set(domain, 'MX', [{ exchange: `mx.${domain}`, priority: 10 }]);
      dns.set(`mx.${domain}`, 'A', ips);
    },
    async sendingDomain(team, name) {
      const res = await p.request('POST', '/domains', { key: team.key, body: { name } });
      if (res.status !== 201) throw new Error(`POST /domains answered ${res.status} ${res.text}`);
      await p.db('domains').where({ id: res.body.id }).update({ status: 'verified', verified_at: new Date() });
      const dkim = res.body.records.find((r: { record: string }) => r.record === 'DKIM');
      dns.set(`${dkim.name}.${name}`, 'TXT', [dkim.value]);
      return { id: res.body.id, name, selector: dkim.name.replace(/\._domainkey$/, '') };
    },
    allowUnsigned(recipient, why) {
      if (!why) throw new Error('allowUnsigned: say why the message goes unsigned');
      unsigned.set(recipient.toLowerCase(), why);
    },
    async close() {
      let problems: string[] = [];
      try {
        problems = await checkSink();
      } finally {
        await Promise.all(all.map(closeDeliveryDeps));
        await sink.close();
        await dns.close();
        await p.close();
      }
      if (problems.length) {
        throw new Error(
          `${problems.length} of the ${sink.messages.length} messages the sink accepted have no passing DKIM signature of their From domain (w.allowUnsigned opts a recipient out):\n${problems.join('\n')}`,
        );
      }
    },
  };
}

/** A delivery attempt as `GET /emails/{id}/attempts` answers it. */
export interface ApiAttempt {
  object: string;
  id: string;
  email_id: string;
  domain: string;
  recipients: string[];
  mx_host: string | null;
  tls: boolean;
  outcome: string;
  response: string | null;
  started_at: string;
  duration_ms: number;
  transcript: string | null;
}

/**
 * A team out of the sandbox with a verified sending domain `name` (DKIM key published), and `send`, which posts
 * through the API (`from` shop@name, a subject and a text unless `body` says otherwise) and answers the email id.
 */
export async function apiSender(w: MtaWorld, name: string) {
  const team = await w.p.createTeam();
  await liftSandbox(w.p.db, team.id, 'us-east-1');
  const domain = await w.sendingDomain(team, name);
  const send = async (body: Record<string, unknown>) => {
    const res = await w.p.request('POST', '/emails', {
      key: team.key,
      body: { from: `Shop <shop@${domain.name}>`, subject: 'Hello', text: 'Hello', ...body },
    });
    if (res.status !== 200) throw new Error(`POST /emails answered ${res.status} ${res.text}`);
    return res.body.id as string;
  };
  return { team, domain, send };
}

/** The email's delivery attempts through the API, newest first. */
export async function attemptsOf(w: MtaWorld, key: string, emailId: string): Promise<ApiAttempt[]> {
  const res = await w.p.request('GET', `/emails/${emailId}/attempts`, { key });
  if (res.status !== 200) throw new Error(`GET /emails/${emailId}/attempts answered ${res.status} ${res.text}`);
  return res.body.data;
}
