// SMTP sessions kept open between transactions: a session that ended its transaction cleanly waits idle
// (IDLE_MS) for the next message to the same address, across jobs, for up to MAX_MESSAGES messages. A session
// whose TLS handshake failed is opened again without STARTTLS by transmit.ts and never pooled.
import type { Counter } from 'prom-client';
import { openSession, type Opened, type Session, type Target, type Timeouts } from './session.ts';

const IDLE_MS = 5_000;
const MAX_MESSAGES = 100;

export interface SessionPool {
  acquire(target: Target, options?: { ignoreTLS?: boolean }): Promise<Opened>;
  /** Back to the pool when `reusable`, otherwise QUIT. */
  release(session: Session, reusable: boolean): void;
  /** QUIT every idle session (shutdown). */
  close(): void;
}

export function createSessionPool(options: {
  name: string;
  timeouts: Timeouts;
  /** Counts each acquire: opened, reused or failed. */
  connections?: Counter<'result'>;
}): SessionPool {
  const idle = new Map<string, { session: Session; timer: NodeJS.Timeout }[]>();
  const keyOf = (t: Target) => `${t.ip}:${t.port}`;

  function take(key: string): Session | undefined {
    const list = idle.get(key) ?? [];
    let found: Session | undefined;
    while (!found && list.length) {
      const entry = list.pop()!;
      clearTimeout(entry.timer);
      if (entry.session.usable()) found = entry.session;
    }
    if (list.length === 0) idle.delete(key);
    return found;
  }

  return {
    async acquire(target, opts = {}) {
      const reused = opts.ignoreTLS ? undefined : take(keyOf(target));
      if (reused) {
        reused.reused = true;
        reused.transcript = [
          `* reusing the session to ${target.host} [${target.ip}]:${target.port} (${reused.tls ? 'STARTTLS' : 'no TLS'})`,
        ];
        options.connections?.inc({ result: 'reused' });
        return { ok: true, session: reused };
      }
      const opened = await openSession(target, {
        name: options.name,
        timeouts: options.timeouts,
        ignoreTLS: opts.ignoreTLS ?? false,
      });
      options.connections?.inc({ result: opened.ok ? 'opened' : 'failed' });
      return opened;
    },
    release(session, reusable) {
      if (!reusable || !session.usable() || session.messages >= MAX_MESSAGES) return session.close();
      const key = keyOf(session.target);
      const timer = setTimeout(() => {
        const rest = (idle.get(key) ?? []).filter((e) => e.session !== session);
        if (rest.length) idle.set(key, rest);
        else idle.delete(key);
        session.close();
      }, IDLE_MS);
      timer.unref();
      idle.set(key, [...(idle.get(key) ?? []), { session, timer }]);
    },
    close() {
      for (const list of idle.values()) {
        for (const e of list) {
          clearTimeout(e.timer);
          e.session.close();
        }
      }
      idle.clear();
    },
  };
}
