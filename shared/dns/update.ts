// Our RFC 2136 client: reads RRsets from a customer's authoritative server and sends it dynamic UPDATE
// messages, every message signed with TSIG and every answer's signature checked. One TCP connection per
// exchange (RFC 2136 §6 and RFC 7766: an UPDATE with a DKIM key does not fit a 512-byte datagram anyway).
// Outcomes are values: nothing a server does makes these functions throw.
import net from 'node:net';
import { randomInt } from 'node:crypto';
import * as packet from 'dns-packet';
import { signMessage, verifyResponse, type TsigKey } from './tsig.ts';
import { CLASS, TYPE, encodeRr, rdata, u16, type RrData, type RrType, type ZoneRecord } from './wire.ts';

export interface UpdateServer {
  /** An IP address (already resolved and checked by the caller). */
  address: string;
  port: number;
  key: TsigKey;
  /** For one exchange: connect, send, answer. */
  timeoutMs?: number;
}

/** Header RCODEs of RFC 1035 §4.1.1 and RFC 2136 §2.2. */
const RCODES = [
  'NOERROR',
  'FORMERR',
  'SERVFAIL',
  'NXDOMAIN',
  'NOTIMP',
  'REFUSED',
  'YXDOMAIN',
  'YXRRSET',
  'NXRRSET',
  'NOTAUTH',
  'NOTZONE',
] as const;
export type Rcode = (typeof RCODES)[number] | `RCODE${number}`;

export type ExchangeFailure =
  /** No connection, no answer in time, or the connection closed early. */
  | { status: 'unreachable'; error: string }
  /** The server refused our TSIG signature: BADSIG (wrong secret), BADKEY (unknown key name), BADTIME (clocks). */
  | { status: 'tsig'; error: string }
  /** A malformed answer, or one that is unsigned or wrongly signed: never trusted. */
  | { status: 'bad_response'; error: string }
  /** Any RCODE but NOERROR (and NXDOMAIN for a query). */
  | { status: 'rcode'; rcode: Rcode };

export type QueryResult = { status: 'ok'; authoritative: boolean; records: ZoneRecord[] } | ExchangeFailure;
export type UpdateResult = { status: 'ok' } | ExchangeFailure;

/** RFC 2136 §2.4 prerequisites we use: an RRset exactly as we saw it, or no RRset of that type at the name. */
export type Prerequisite =
  | { kind: 'rrset_equals'; name: string; type: RrType; records: RrData[] }
  | { kind: 'rrset_absent'; name: string; type: RrType };
/** RFC 2136 §2.5: add one record, or delete one record by its exact value (class NONE). Never a whole RRset. */
export type Change = { op: 'add'; record: ZoneRecord } | { op: 'delete'; record: ZoneRecord };

const OPCODE_UPDATE = 5 << 11;

function rcodeName(n: number): Rcode {
  return RCODES[n] ?? `RCODE${n}`;
}

/** The UPDATE message of RFC 2136 §2: zone, prerequisite and update sections, no additional records. */
export function buildUpdate(id: number, zone: string, prerequisites: Prerequisite[], changes: Change[]): Buffer {
  const pre = prerequisites.flatMap((p) =>
    p.kind === 'rrset_absent'
      ? [encodeRr(p.name, TYPE[p.type], CLASS.NONE, 0, null)]
      : p.records.map((r) => encodeRr(p.name, TYPE[p.type], CLASS.IN, 0, rdata(r))),
  );
  const upd = changes.map((c) =>
    c.op === 'add'
      ? encodeRr(c.record.name, TYPE[c.record.type], CLASS.IN, c.record.ttl, rdata(c.record))
      : encodeRr(c.record.name, TYPE[c.record.type], CLASS.NONE, 0, rdata(c.record)),
  );
  const header = Buffer.concat([u16(id), u16(OPCODE_UPDATE), u16(1), u16(pre.length), u16(upd.length), u16(0)]);
  const zoneSection = packet.encode({ questions: [{ name: zone, type: 'SOA', class: 'IN' }] }).subarray(12);
  return Buffer.concat([header, zoneSection, ...pre, ...upd]);
}

/** Sends one length-prefixed message over TCP (RFC 1035 §4.2.2) and reads one answer. */
export function exchangeTcp(
  address: string,
  port: number,
  message: Buffer,
  timeoutMs: number,
): Promise<{ status: 'ok'; answer: Buffer } | { status: 'unreachable'; error: string }> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: address, port });
    let received = Buffer.alloc(0);
    const done = (result: { status: 'ok'; answer: Buffer } | { status: 'unreachable'; error: string }) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () => done({ status: 'unreachable', error: `no answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
    socket.on('connect', () => socket.write(Buffer.concat([u16(message.length), message])));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= 2 && received.length >= 2 + received.readUInt16BE(0)) {
        done({ status: 'ok', answer: received.subarray(2, 2 + received.readUInt16BE(0)) });
      }
    });
    socket.on('error', (err: NodeJS.ErrnoException) => done({ status: 'unreachable', error: err.code ?? err.message }));
    socket.on('close', () =>
      done({ status: 'unreachable', error: 'the server closed the connection without an answer' }),
    );
  });
}

/** Signs, sends, checks the answer's id and signature. Answers the decoded message. */
async function signedExchange(
  server: UpdateServer,
  message: Buffer,
): Promise<{ status: 'ok'; answer: packet.DecodedPacket; rcode: Rcode } | ExchangeFailure> {
  const { wire, mac } = signMessage(message, server.key);
  const sent = await exchangeTcp(server.address, server.port, wire, server.timeoutMs ?? 5000);
  if (sent.status !== 'ok') return sent;
  const answer = sent.answer;
  if (answer.length < 12 || answer.readUInt16BE(0) !== message.readUInt16BE(0) || !(answer[2] & 0x80)) {
    return { status: 'bad_response', error: 'the answer does not match the request' };
  }
  const check = verifyResponse(answer, server.key, mac);
  if (check.status === 'refused') return { status: 'tsig', error: check.error };
  if (check.status === 'invalid') return { status: 'bad_response', error: check.reason };
  let decoded: packet.DecodedPacket;
  try {
    decoded = packet.decode(answer);
  } catch (err) {
    return { status: 'bad_response', error: `malformed answer: ${(err as Error).message}` };
  }
  return { status: 'ok', answer: decoded, rcode: rcodeName(answer[3] & 0x0f) };
}

const same = (a: string, b: string) => a.toLowerCase().replace(/\.$/, '') === b.toLowerCase().replace(/\.$/, '');

function toZoneRecord(a: packet.Answer, type: RrType): ZoneRecord | null {
  if (a.type !== type || !('data' in a)) return null;
  const ttl = a.ttl ?? 0;
  const name = a.name.replace(/\.$/, '');
  switch (a.type) {
    case 'A':
    case 'AAAA':
    case 'CNAME':
      return { name, ttl, type: a.type, data: String(a.data).replace(/\.$/, '') };
    case 'MX':
      return {
        name,
        ttl,
        type: 'MX',
        data: { preference: a.data.preference ?? 0, exchange: a.data.exchange.replace(/\.$/, '') },
      };
    case 'TXT':
      return { name, ttl, type: 'TXT', data: ([] as (string | Buffer)[]).concat(a.data).map((c) => Buffer.from(c)) };
    case 'CAA':
      return { name, ttl, type: 'CAA', data: { flags: a.data.flags ?? 0, tag: a.data.tag, value: a.data.value } };
    default:
      return null;
  }
}

async function query(server: UpdateServer, name: string, type: RrType | 'SOA') {
  const message = packet.encode({
    type: 'query',
    id: randomInt(0x10000),
    flags: 0,
    questions: [{ name, type, class: 'IN' }],
  });
  return signedExchange(server, message);
}

/** Whether the server holds `zone` itself: an authoritative answer with the zone's SOA. */
export async function probeZone(
  server: UpdateServer,
  zone: string,
): Promise<{ status: 'ok'; authoritative: boolean } | ExchangeFailure> {
  const res = await query(server, zone, 'SOA');
  if (res.status !== 'ok') return res;
  if (res.rcode !== 'NOERROR' && res.rcode !== 'NXDOMAIN') return { status: 'rcode', rcode: res.rcode };
  const soa = (res.answer.answers ?? []).some((a) => a.type === 'SOA' && same(a.name, zone));
  return { status: 'ok', authoritative: soa && Boolean((res.answer.flags ?? 0) & packet.AUTHORITATIVE_ANSWER) };
}

/** The RRset of one type at a name, read from the server itself (signed query, no recursion). */
export async function queryRrset(server: UpdateServer, name: string, type: RrType): Promise<QueryResult> {
  const res = await query(server, name, type);
  if (res.status !== 'ok') return res;
  if (res.rcode !== 'NOERROR' && res.rcode !== 'NXDOMAIN') return { status: 'rcode', rcode: res.rcode };
  const authoritative = Boolean((res.answer.flags ?? 0) & packet.AUTHORITATIVE_ANSWER);
  // An alias at the name comes back instead of the type asked for; callers ask for CNAME on its own.
  const records = (res.answer.answers ?? [])
    .filter((a) => same(a.name, name))
    .map((a) => toZoneRecord(a, type))
    .filter((r) => r !== null);
  return { status: 'ok', authoritative, records };
}

/** Sends one UPDATE; the server applies all of it or none of it (RFC 2136 §3.4). */
export async function sendUpdate(
  server: UpdateServer,
  zone: string,
  prerequisites: Prerequisite[],
  changes: Change[],
): Promise<UpdateResult> {
  const res = await signedExchange(server, buildUpdate(randomInt(0x10000), zone, prerequisites, changes));
  if (res.status !== 'ok') return res;
  return res.rcode === 'NOERROR' ? { status: 'ok' } : { status: 'rcode', rcode: res.rcode };
}
