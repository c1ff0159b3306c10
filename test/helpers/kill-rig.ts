// The rig of test/process-kills.test.ts: platform entry points started as their own processes in an MtaWorld (to
// be killed for real), probes that wait for them to serve, an mta that delivers whatever a kill left, and readers
// of what was committed, recorded and delivered.
import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import type { MtaWorld } from './mta.ts';
import { exited, gone, type Children } from './processes.ts';
import { until } from './wait.ts';

export interface SubmissionPorts {
  submission: number;
  submissionTls: number;
}

/** One committed email (one recipient each). */
export interface Stored {
  emailId: string;
  address: string;
  status: string;
}

/** Resolves once `probe` succeeds; throws if `child` exits first or after `ms`. */
export async function untilServing(
  child: ChildProcess,
  what: string,
  probe: () => Promise<boolean>,
  ms = 60_000,
): Promise<void> {
  await until(
    async () => {
      if (gone(child)) throw new Error(`${what}: the process exited (${child.exitCode ?? child.signalCode})`);
      return probe();
    },
    { what, timeoutMs: ms, intervalMs: 100 },
  );
}

export const httpAnswers = (url: string) => () =>
  fetch(`${url}/`, { headers: { 'user-agent': 'postwerk-tests/1.0' } }).then(
    (r) => r.arrayBuffer().then(() => true),
    () => false,
  );

export const tcpListens = (port: number) => () =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

/** The rig over world `w`; every process it starts is one of `children` (killed at the end, whatever happened). */
export function killRig(w: MtaWorld, children: Children, mtaConcurrency: number) {
  /** `file` as its own process, as production starts it, with the world's configuration and `extra` on top. */
  const startChild = (file: string, extra: Record<string, string>): ChildProcess =>
    children.start(file, w.p.config, extra);

  /**
   * An mta with its submission listeners on the given ports (0: the kernel picks one; never 587/465, another test
   * file may run an mta too). Its delivery at the priority of the test processes (MTA_NICE=0): these tests are about
   * what a kill leaves, and on a loaded CI machine a delivery at nice 10 waits behind every other test file's
   * processes (the whole backlog of a kill took over 90 s there).
   */
  const startMta = (ports: SubmissionPorts): ChildProcess =>
    startChild('mta/main.ts', {
      MTA_NICE: '0',
      MTA_CONCURRENCY: String(mtaConcurrency),
      SMTP_SUBMISSION_PORT: String(ports.submission),
      SMTP_SUBMISSION_TLS_PORT: String(ports.submissionTls),
    });

  /**
   * Starts an mta on `ports` and waits until every recipient of the team's emails is delivered (each committed
   * email, answered or not); the mta is stopped after, whatever happened.
   */
  const deliverEverything = async (teamId: string, ports: SubmissionPorts, ms = 90_000): Promise<void> => {
    const mta = startMta(ports);
    try {
      await until(
        async () => {
          const open = await w.p
            .db('email_recipients')
            .where({ team_id: teamId })
            .whereNot({ status: 'delivered' })
            .count({ n: '*' })
            .first();
          if (Number(open?.n) === 0) return true;
          if (gone(mta))
            throw new Error(
              `the mta exited (${mta.exitCode ?? mta.signalCode}) with ${open?.n} recipients not delivered`,
            );
          return undefined;
        },
        { what: 'every recipient delivered', timeoutMs: ms, intervalMs: 100 },
      );
    } finally {
      mta.kill('SIGTERM');
      await exited(mta);
    }
  };

  /** The team's committed emails (one recipient each), by email id. */
  const storedOf = async (teamId: string): Promise<Map<string, Stored>> => {
    const rows: { email_id: string; address: string; status: string }[] = await w.p
      .db('email_recipients')
      .where({ team_id: teamId })
      .select('email_id', 'address', 'status');
    return new Map(rows.map((r) => [r.email_id, { emailId: r.email_id, address: r.address, status: r.status }]));
  };

  /** `email.delivered` events per email id. */
  const deliveredEvents = async (ids: string[]): Promise<Map<string, number>> => {
    const rows: { email_id: string; n: string }[] = await w.p
      .db('events')
      .whereRaw(`data->>'email_id' = any(?)`, [ids])
      .where({ type: 'email.delivered' })
      .groupByRaw(`data->>'email_id'`)
      .select(w.p.db.raw(`data->>'email_id' as email_id`), w.p.db.raw('count(*) as n'));
    return new Map(rows.map((r) => [r.email_id, Number(r.n)]));
  };

  /** Addresses of `domain` at the sink that no committed email names (something delivered that was never accepted). */
  const strays = (domain: string, stored: Map<string, Stored>) => {
    const known = new Set([...stored.values()].map((s) => s.address.toLowerCase()));
    return w.sink.messages
      .flatMap((m) => m.to)
      .filter((a) => a.toLowerCase().endsWith(`@${domain}`) && !known.has(a.toLowerCase()));
  };

  /** Messages at the sink to addresses of `domain`. */
  const atSink = (domain: string) => w.sink.messages.filter((m) => m.to.some((a) => a.endsWith(`@${domain}`)));

  return { startChild, startMta, deliverEverything, storedOf, deliveredEvents, strays, atSink };
}
