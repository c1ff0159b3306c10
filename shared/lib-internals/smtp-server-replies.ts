// Two corrections to the replies of smtp-server, made where it writes them, and the replies of one tick in one write.
//
// Library: smtp-server 3.21.6. Internals used: SMTPServer's `connections` set (its add() wrapped, by wrapSends alone)
// and each connection's `send(code, data, context)` (wrapped; `secure`, `_socket`, `_upgrading`). Guarded by
// test/lib-internals.test.ts, test/submission-session.test.ts (exactly one enhanced code per reply) and
// test/submission.test.ts (no AUTH before STARTTLS).
import type { SMTPServer } from 'smtp-server';

const OWN_CODE = /^[245]\.\d{1,3}\.\d{1,3} /;

/**
 * Two corrections to every reply of `server`'s connections, made where smtp-server writes them (its connection's
 * send: one wrapper, so the dependency on the library's internals is in one place; a test fails if an upgrade
 * breaks it):
 * - With ENHANCEDSTATUSCODES announced (RFC 2034), smtp-server writes a code before the text of every reply, ours
 *   too, choosing it from the reply code alone (550 → 5.1.1, so `550 5.1.1 5.7.1 ...`); an error handed to its
 *   callbacks has no way to name its own. A reply whose text already starts with one gets none added: every reply
 *   carries exactly one code, ours where we chose it, the library's for its own (500 5.5.2, 530 5.7.0, ...).
 * - RFC 4954 §4 and RFC 8314: credentials travel only encrypted. smtp-server refuses AUTH before STARTTLS (538) but
 *   still announces it, so a client may send its key in the clear before learning it must not; like Postfix's
 *   smtpd_tls_auth_only, the EHLO reply leaves AUTH out until TLS is up.
 */
export function correctReplies(server: SMTPServer): void {
  wrapSends(server, (send, connection) => (code, data, context) => {
    if (typeof data === 'string' && OWN_CODE.test(data)) return send(code, data, false);
    if (code === 250 && Array.isArray(data) && !connection.secure)
      return send(
        code,
        data.filter((line) => !/^AUTH /.test(line)),
        context,
      );
    return send(code, data, context);
  });
}

type Connection = Parameters<SMTPServer['connections']['add']>[0];
type Send = Connection['send'];

/** Each connection's send, wrapped as smtp-server adds the connection: the one place this file reaches in. */
function wrapSends(server: SMTPServer, wrap: (send: Send, connection: Connection) => Send): void {
  const add = server.connections.add.bind(server.connections);
  server.connections.add = (connection) => {
    connection.send = wrap(connection.send.bind(connection), connection);
    return add(connection);
  };
}

/**
 * Every connection of `server` with the replies of one tick leaving in one write: a client that pipelines (RFC 2920)
 * MAIL, RCPT and DATA gets their replies as they are decided, and those decided together go out together (one TLS
 * record and one syscall instead of one each). Nothing is held while STARTTLS is under way.
 */
export function corkReplies(server: SMTPServer): void {
  wrapSends(server, (send, connection) => corked(send, connection as unknown as CorkedConnection));
}

interface CorkedConnection {
  _socket: import('node:net').Socket;
  _upgrading?: boolean;
}

/** `send`, holding the replies of a tick (corkReplies). */
function corked(send: Send, connection: CorkedConnection): Send {
  let held: import('node:net').Socket | null = null;
  const release = () => {
    held?.uncork();
    held = null;
  };
  return (code, data, context) => {
    // A 220 (the greeting, or STARTTLS's go-ahead, after which the TLS handshake may start in this very tick) leaves
    // at once, with whatever was held before it.
    if (code === 220) {
      release();
      return send(code, data, context);
    }
    const socket = connection._socket;
    if (held === null && !connection._upgrading && socket?.writable) {
      held = socket;
      socket.cork();
      process.nextTick(release);
    }
    return send(code, data, context);
  };
}
