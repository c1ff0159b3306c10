// An in-process authoritative DNS server on 127.0.0.1 for tests: real DNS over UDP and TCP (RFC 1035 §4.2),
// records set per name, and failure modes per name (SERVFAIL, REFUSED, silence, garbage, a spoofed id).
// Point a resolver at `address` (it is a DNS_SERVERS entry) and the code under test talks real DNS.
import dgram from 'node:dgram';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import * as packet from 'dns-packet';

export type DnsRecordType = 'TXT' | 'MX' | 'CNAME' | 'A' | 'AAAA' | 'CAA';
export type DnsFailureMode = 'servfail' | 'refused' | 'timeout' | 'garbage' | 'wrong-id';

export interface DnsRecordData {
  /** A string is split into 255-byte character-strings; an array is sent as the chunks given. */
  TXT: string | string[];
  MX: { exchange: string; priority: number };
  CNAME: string;
  A: string;
  AAAA: string;
  CAA: { flags?: number; tag: 'issue' | 'issuewild' | 'iodef'; value: string };
}

export interface DnsQueryLog {
  name: string;
  type: string;
  transport: 'udp' | 'tcp';
}

export interface DnsServer {
  /** `127.0.0.1:PORT`, the form DNS_SERVERS takes. */
  address: string;
  port: number;
  /** Every question received, in order: lets a test see a retry over TCP. */
  queries: DnsQueryLog[];
  /** Replaces the records of one type at a name (none: as remove). */
  set<T extends DnsRecordType>(name: string, type: T, records: DnsRecordData[T][]): void;
  /** Removes one type at a name, or (no type) every record and the failure mode of the name. */
  remove(name: string, type?: DnsRecordType): void;
  clear(): void;
  /** Every question for this exact name fails this way, over UDP and TCP alike. */
  fail(name: string, mode: DnsFailureMode): void;
  close(): Promise<void>;
}

type Rr = packet.Answer;
const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;
/**
 * RFC 1035 §4.2.1 without EDNS; with EDNS the client's size, capped where today's servers cap it (DNS Flag Day 2020).
 */
const UDP_LIMIT = 512;
const EDNS_LIMIT = 1232;

const norm = (name: string) => name.toLowerCase().replace(/\.$/, '');

function txtChunks(value: string | string[]): Buffer[] {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value);
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 255) chunks.push(bytes.subarray(i, i + 255));
    return chunks.length ? chunks : [Buffer.alloc(0)];
  }
  return value.map((s) => {
    const b = Buffer.from(s);
    if (b.length > 255) throw new Error(`TXT character-string over 255 bytes (${b.length})`);
    return b;
  });
}

function toRr(name: string, type: DnsRecordType, data: DnsRecordData[DnsRecordType]): Rr {
  const base = { name, ttl: 300, class: 'IN' as const };
  switch (type) {
    case 'TXT':
      return { ...base, type, data: txtChunks(data as DnsRecordData['TXT']) };
    case 'MX': {
      const mx = data as DnsRecordData['MX'];
      return { ...base, type, data: { exchange: mx.exchange, preference: mx.priority } };
    }
    case 'CAA': {
      const caa = data as DnsRecordData['CAA'];
      return { ...base, type, data: { flags: caa.flags ?? 0, tag: caa.tag, value: caa.value } };
    }
    default:
      return { ...base, type, data: data as string };
  }
}

/** name → type → resource records (owner name as set, so answers keep the publisher's case). */
type Zone = Map<string, Map<DnsRecordType, Rr[]>>;

/** What the server answers from: its records, its failure modes per name, and the log of questions. */
interface ServerState {
  zone: Zone;
  failures: Map<string, DnsFailureMode>;
  queries: DnsQueryLog[];
}

/** Authoritative lookup: the exact type, else a CNAME followed inside our own data (RFC 1034 §4.3.2). */
function lookup(zone: Zone, qname: string, qtype: string): { rcode: number; answers: Rr[] } {
  const answers: Rr[] = [];
  const seen = new Set<string>();
  let name = norm(qname);
  for (;;) {
    const rrsets = zone.get(name);
    // RFC 6604 §3: the rcode speaks for the last name of the chain.
    if (!rrsets) return { rcode: RCODE.NXDOMAIN, answers };
    const exact = rrsets.get(qtype as DnsRecordType);
    if (exact) return { rcode: RCODE.NOERROR, answers: [...answers, ...exact] };
    const cname = rrsets.get('CNAME');
    if (!cname || qtype === 'CNAME') return { rcode: RCODE.NOERROR, answers };
    answers.push(...cname);
    seen.add(name);
    name = norm((cname[0] as packet.StringAnswer).data);
    if (seen.has(name)) return { rcode: RCODE.NOERROR, answers };
  }
}

/** The right id, so the resolver matches it to its query, then a header announcing more records than follow. */
function garbage(id: number): Buffer {
  const bytes = randomBytes(40);
  bytes.writeUInt16BE(id, 0);
  bytes.writeUInt16BE(0x8400, 2); // QR, AA, NOERROR
  bytes.writeUInt16BE(1, 4);
  bytes.writeUInt16BE(0xffff, 6);
  return bytes;
}

/** A reply builder for one query: its id, question and EDNS (answered with ours) echoed. */
function replier(query: packet.DecodedPacket, edns: packet.OptAnswer | undefined) {
  return (rcode: number, answers: Rr[] = [], extra = 0): Buffer =>
    packet.encode({
      type: 'response',
      id: query.id ?? 0,
      flags: packet.AUTHORITATIVE_ANSWER | ((query.flags ?? 0) & packet.RECURSION_DESIRED) | extra | rcode,
      questions: query.questions,
      answers,
      additionals: edns
        ? [
            {
              type: 'OPT',
              name: '.',
              udpPayloadSize: EDNS_LIMIT,
              extendedRcode: 0,
              ednsVersion: 0,
              flags: 0,
              flag_do: false,
              options: [],
            },
          ]
        : [],
    });
}

/** The bytes to send back for one query message, or null for silence. */
function respond(state: ServerState, msg: Buffer, transport: 'udp' | 'tcp'): Buffer | null {
  let query: packet.DecodedPacket;
  try {
    query = packet.decode(msg);
  } catch {
    return null; // not DNS: drop, as servers do
  }
  const question = query.questions?.[0];
  const id = query.id ?? 0;
  const edns = query.additionals?.find((a) => a.type === 'OPT') as packet.OptAnswer | undefined;
  const reply = replier(query, edns);
  if (!question) return reply(RCODE.FORMERR);
  state.queries.push({ name: question.name, type: question.type, transport });

  const failure = state.failures.get(norm(question.name));
  if (failure === 'timeout') return null;
  if (failure === 'servfail') return reply(RCODE.SERVFAIL);
  if (failure === 'refused') return reply(RCODE.REFUSED);
  if (failure === 'garbage') return garbage(id);

  const { rcode, answers } = lookup(state.zone, question.name, question.type);
  let out = reply(rcode, answers);
  const limit = edns ? Math.max(UDP_LIMIT, Math.min(edns.udpPayloadSize, EDNS_LIMIT)) : UDP_LIMIT;
  if (transport === 'udp' && out.length > limit) {
    // RFC 2181 §9: set TC rather than send a partial RRset; the client asks again over TCP.
    out = reply(rcode, [], packet.TRUNCATED_RESPONSE);
  }
  // A spoofer's answer: right question, right records, an id the resolver did not send.
  if (failure === 'wrong-id') out.writeUInt16BE((id + 1) & 0xffff, 0);
  return out;
}

/** DNS over TCP: each message preceded by its two-byte length (RFC 1035 §4.2.2, RFC 7766 §8). */
function tcpServer(state: ServerState): { tcp: net.Server; sockets: Set<net.Socket> } {
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const len = buffered.readUInt16BE(0);
        const out = respond(state, buffered.subarray(2, 2 + len), 'tcp');
        buffered = buffered.subarray(2 + len);
        if (out) {
          const framed = Buffer.alloc(2 + out.length);
          framed.writeUInt16BE(out.length, 0);
          out.copy(framed, 2);
          socket.write(framed);
        }
      }
    });
  });
  return { tcp, sockets };
}

/**
 * One port for both transports: binds UDP (at random unless `port` is fixed), then `tcp` on the same number (again
 * if TCP has it taken); the bound UDP socket.
 */
async function bindBoth(host: string, port: number | undefined, tcp: net.Server): Promise<dgram.Socket> {
  for (let attempt = 0; ; attempt++) {
    if (attempt === (port ? 1 : 20)) throw new Error(`no port free for both UDP and TCP on ${host}`);
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port ?? 0, host, () => resolve());
    });
    const listened = await new Promise<boolean>((resolve) => {
      const onError = () => resolve(false);
      tcp.once('error', onError);
      tcp.listen(socket.address().port, host, () => {
        tcp.off('error', onError);
        resolve(true);
      });
    });
    if (listened) return socket;
    await new Promise<void>((resolve) => socket.close(() => resolve()));
  }
}

/** `host` and `port` default to 127.0.0.1 and a free port; a fixed port (53, for a resolver that cannot be told
 * another) gets one try. */
export async function startDnsServer(options: { host?: string; port?: number } = {}): Promise<DnsServer> {
  const host = options.host ?? '127.0.0.1';
  const state: ServerState = { zone: new Map(), failures: new Map(), queries: [] };
  const { zone, failures } = state;
  const { tcp, sockets } = tcpServer(state);
  const udp = await bindBoth(host, options.port, tcp);
  udp.on('message', (msg: Buffer, rinfo: dgram.RemoteInfo) => {
    const out = respond(state, msg, 'udp');
    if (out) udp.send(out, rinfo.port, rinfo.address);
  });
  const port = udp.address().port;

  const dns: DnsServer = {
    address: `${host}:${port}`,
    port,
    queries: state.queries,
    set(name, type, records) {
      if (records.length === 0) return dns.remove(name, type);
      const key = norm(name);
      const rrsets = zone.get(key) ?? new Map<DnsRecordType, Rr[]>();
      rrsets.set(
        type,
        records.map((r) => toRr(name.replace(/\.$/, ''), type, r)),
      );
      zone.set(key, rrsets);
    },
    remove(name, type) {
      const key = norm(name);
      if (!type) {
        zone.delete(key);
        failures.delete(key);
        return;
      }
      zone.get(key)?.delete(type);
      if (zone.get(key)?.size === 0) zone.delete(key);
    },
    clear() {
      zone.clear();
      failures.clear();
    },
    fail(name, mode) {
      failures.set(norm(name), mode);
    },
    async close() {
      for (const connection of sockets) connection.destroy();
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
      ]);
    },
  };
  return dns;
}
