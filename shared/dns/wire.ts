// DNS wire format pieces the UPDATE client needs and dns-packet does not offer: names in canonical form,
// resource records of any class (RFC 2136 uses NONE and ANY with empty RDATA), and the byte offset of each
// record in a message (TSIG signs a message without its last record). RDATA itself is dns-packet's, so what
// we decode from a server re-encodes to the same bytes when we ask that server to delete it.
import * as packet from 'dns-packet';

export const CLASS = { IN: 1, NONE: 254, ANY: 255 } as const;
export const TYPE = { A: 1, CNAME: 5, SOA: 6, MX: 15, TXT: 16, AAAA: 28, TSIG: 250, ANY: 255, CAA: 257 } as const;
export type RrType = 'A' | 'AAAA' | 'CNAME' | 'MX' | 'TXT' | 'CAA';

export type RrData =
  | { type: 'A' | 'AAAA' | 'CNAME'; data: string }
  | { type: 'MX'; data: { preference: number; exchange: string } }
  | { type: 'TXT'; data: Buffer[] }
  | { type: 'CAA'; data: { flags: number; tag: string; value: string } };

/** A record as it sits in a zone: owner name without trailing dot. */
export type ZoneRecord = RrData & { name: string; ttl: number };

interface RdataCodec {
  encode(data: unknown): Buffer;
}
// dns-packet exports its per-type codecs (`record(type)`), which its type declarations leave out.
const codecs = packet as unknown as { record(type: string): RdataCodec };

export const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
};
export const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
export const u48 = (n: number) => {
  const b = Buffer.alloc(6);
  b.writeUIntBE(n, 0, 6);
  return b;
};

/** Uncompressed wire form; lower case when `canonical` (RFC 4034 §6.2, which TSIG's MAC uses). */
export function encodeName(name: string, canonical = false): Buffer {
  const text = name.replace(/\.$/, '');
  const labels = text === '' ? [] : text.split('.');
  const parts: Buffer[] = [];
  for (const label of labels) {
    const bytes = Buffer.from(canonical ? label.toLowerCase() : label, 'ascii');
    if (bytes.length === 0 || bytes.length > 63) throw new Error(`bad DNS label in ${name}`);
    parts.push(Buffer.from([bytes.length]), bytes);
  }
  parts.push(Buffer.from([0]));
  const wire = Buffer.concat(parts);
  if (wire.length > 255) throw new Error(`DNS name too long: ${name}`);
  return wire;
}

/** A name at `offset` (compression pointers followed) and the offset just past it in the message. */
export function readName(buf: Buffer, offset: number): { name: string; next: number } {
  const labels: string[] = [];
  let next = -1;
  let at = offset;
  for (let jumps = 0; jumps < 64;) {
    if (at >= buf.length) throw new Error('name runs past the message');
    const len = buf[at];
    if (len === 0) {
      if (next < 0) next = at + 1;
      return { name: labels.join('.'), next };
    }
    if ((len & 0xc0) === 0xc0) {
      if (next < 0) next = at + 2;
      at = buf.readUInt16BE(at) & 0x3fff;
      jumps++;
      continue;
    }
    if (len & 0xc0) throw new Error('unknown label type');
    labels.push(buf.toString('ascii', at + 1, at + 1 + len));
    at += 1 + len;
  }
  throw new Error('name compression loop');
}

/** RDATA of one record, without its length. */
export function rdata(rr: RrData): Buffer {
  return codecs.record(rr.type).encode(rr.data).subarray(2);
}

/** One resource record; `data` null is the empty RDATA of RFC 2136's "delete RRset" and prerequisites. */
export function encodeRr(name: string, type: number, klass: number, ttl: number, data: Buffer | null): Buffer {
  const body = data ?? Buffer.alloc(0);
  return Buffer.concat([encodeName(name), u16(type), u16(klass), u32(ttl), u16(body.length), body]);
}

/** Where each record after the question section starts, and where the message ends. */
export function recordOffsets(buf: Buffer): { starts: number[]; end: number } {
  if (buf.length < 12) throw new Error('message shorter than its header');
  let at = 12;
  for (let i = buf.readUInt16BE(4); i > 0; i--) at = readName(buf, at).next + 4;
  const count = buf.readUInt16BE(6) + buf.readUInt16BE(8) + buf.readUInt16BE(10);
  const starts: number[] = [];
  for (let i = 0; i < count; i++) {
    starts.push(at);
    at = readName(buf, at).next;
    if (at + 10 > buf.length) throw new Error('record runs past the message');
    at += 10 + buf.readUInt16BE(at + 8);
  }
  if (at > buf.length) throw new Error('record runs past the message');
  return { starts, end: at };
}

/** The text of a TXT record: its character-strings joined (RFC 7208 §3.3). */
export const txtText = (chunks: Buffer[]) => Buffer.concat(chunks).toString('utf8');

/** A TXT value as character-strings of at most 255 bytes (RFC 1035 §3.3.14). */
export function txtChunks(value: string): Buffer[] {
  const bytes = Buffer.from(value, 'utf8');
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 255) chunks.push(bytes.subarray(i, i + 255));
  return chunks.length ? chunks : [Buffer.alloc(0)];
}
