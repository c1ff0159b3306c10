// TSIG (RFC 8945): an HMAC over a DNS message and the TSIG variables, carried as the message's last
// additional record. Every request we send to a customer's server is signed, and its answer must be signed
// with the same key over our request's MAC (§5.3), so neither an update nor what we read back can be forged.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { CLASS, TYPE, encodeName, readName, recordOffsets, u16, u32, u48 } from './wire.ts';

/** Algorithm names as they travel (RFC 8945 §6) and the hash each uses. */
export const TSIG_ALGORITHMS = { 'hmac-sha256': 'sha256', 'hmac-sha512': 'sha512' } as const;
export type TsigAlgorithm = keyof typeof TSIG_ALGORITHMS;

export interface TsigKey {
  /** The key's name as the server knows it (a domain name). */
  name: string;
  algorithm: TsigAlgorithm;
  secret: Buffer;
}

/** TSIG error codes of the TSIG record's Error field (RFC 8945 §3, IANA RCODE registry). */
const TSIG_ERRORS: Record<number, string> = { 16: 'BADSIG', 17: 'BADKEY', 18: 'BADTIME', 22: 'BADTRUNC' };

/** §10: 300 seconds of clock difference allowed either way. */
export const FUDGE_SECONDS = 300;

export type TsigCheck =
  | { status: 'ok' }
  /** The server refused our signature (BADSIG, BADKEY, BADTIME, BADTRUNC). */
  | { status: 'refused'; error: string }
  /** The answer is unsigned, signed with another key, or its MAC is wrong: it cannot be trusted. */
  | { status: 'invalid'; reason: string };

function hmac(key: TsigKey, parts: Buffer[]): Buffer {
  const h = createHmac(TSIG_ALGORITHMS[key.algorithm], key.secret);
  for (const p of parts) h.update(p);
  return h.digest();
}

/** §4.3.3: key name and algorithm in canonical form, class ANY, TTL 0, then the timers, error and other data. */
function variables(key: TsigKey, timeSigned: number, fudge: number, error: number, other: Buffer): Buffer {
  return Buffer.concat([
    encodeName(key.name, true),
    u16(CLASS.ANY),
    u32(0),
    encodeName(key.algorithm, true),
    u48(timeSigned),
    u16(fudge),
    u16(error),
    u16(other.length),
    other,
  ]);
}

/** Appends a TSIG record to `message` (whose ARCOUNT does not count it yet) and answers the MAC it carries. */
export function signMessage(message: Buffer, key: TsigKey, now = Date.now()): { wire: Buffer; mac: Buffer } {
  const timeSigned = Math.floor(now / 1000);
  const mac = hmac(key, [message, variables(key, timeSigned, FUDGE_SECONDS, 0, Buffer.alloc(0))]);
  const data = Buffer.concat([
    encodeName(key.algorithm, true),
    u48(timeSigned),
    u16(FUDGE_SECONDS),
    u16(mac.length),
    mac,
    u16(message.readUInt16BE(0)),
    u16(0),
    u16(0),
  ]);
  const record = Buffer.concat([
    encodeName(key.name, true),
    u16(TYPE.TSIG),
    u16(CLASS.ANY),
    u32(0),
    u16(data.length),
    data,
  ]);
  const wire = Buffer.concat([message, record]);
  wire.writeUInt16BE(message.readUInt16BE(10) + 1, 10);
  return { wire, mac };
}

interface TsigRecord {
  keyName: string;
  algorithm: string;
  timeSigned: number;
  fudge: number;
  mac: Buffer;
  originalId: number;
  error: number;
  other: Buffer;
}

function parseTsig(buf: Buffer, start: number): TsigRecord | null {
  const owner = readName(buf, start);
  let at = owner.next;
  if (buf.readUInt16BE(at) !== TYPE.TSIG) return null;
  at += 10;
  const algorithm = readName(buf, at);
  at = algorithm.next;
  const timeSigned = buf.readUIntBE(at, 6);
  const fudge = buf.readUInt16BE(at + 6);
  const macSize = buf.readUInt16BE(at + 8);
  at += 10;
  const mac = buf.subarray(at, at + macSize);
  at += macSize;
  const originalId = buf.readUInt16BE(at);
  const error = buf.readUInt16BE(at + 2);
  const otherLen = buf.readUInt16BE(at + 4);
  const other = buf.subarray(at + 6, at + 6 + otherLen);
  if (mac.length !== macSize || other.length !== otherLen) throw new Error('TSIG record runs past the message');
  return { keyName: owner.name, algorithm: algorithm.name, timeSigned, fudge, mac, originalId, error, other };
}

const sameName = (a: string, b: string) => a.toLowerCase().replace(/\.$/, '') === b.toLowerCase().replace(/\.$/, '');

/** Checks the TSIG of an answer to a request we signed with `requestMac` (RFC 8945 §5.3 and §5.4). */
export function verifyResponse(response: Buffer, key: TsigKey, requestMac: Buffer, now = Date.now()): TsigCheck {
  let tsig: TsigRecord | null;
  let start: number;
  try {
    const { starts } = recordOffsets(response);
    if (response.readUInt16BE(10) === 0) return { status: 'invalid', reason: 'the answer is not signed' };
    start = starts[starts.length - 1];
    tsig = parseTsig(response, start);
  } catch (err) {
    return { status: 'invalid', reason: `malformed answer: ${(err as Error).message}` };
  }
  if (!tsig) return { status: 'invalid', reason: 'the answer is not signed' };
  if (!sameName(tsig.keyName, key.name))
    return { status: 'invalid', reason: `the answer is signed with another key (${tsig.keyName})` };
  // BADSIG and BADKEY answers carry no MAC (§5.3.2): the error is all there is to read.
  if (tsig.error !== 0) return { status: 'refused', error: TSIG_ERRORS[tsig.error] ?? `TSIG error ${tsig.error}` };
  if (!sameName(tsig.algorithm, key.algorithm))
    return { status: 'invalid', reason: `the answer is signed with ${tsig.algorithm}` };

  const unsigned = Buffer.from(response.subarray(0, start));
  unsigned.writeUInt16BE(tsig.originalId, 0);
  unsigned.writeUInt16BE(response.readUInt16BE(10) - 1, 10);
  const expected = hmac(key, [
    u16(requestMac.length),
    requestMac,
    unsigned,
    variables(key, tsig.timeSigned, tsig.fudge, tsig.error, tsig.other),
  ]);
  // §5.2.2.1: a truncated MAC keeps at least half the hash and never fewer than 10 octets.
  const size = tsig.mac.length;
  if (
    size > expected.length ||
    size < Math.max(10, expected.length / 2) ||
    !timingSafeEqual(expected.subarray(0, size), tsig.mac)
  ) {
    return { status: 'invalid', reason: "the answer's signature does not match" };
  }
  if (Math.abs(Math.floor(now / 1000) - tsig.timeSigned) > tsig.fudge) {
    return { status: 'invalid', reason: 'the answer was signed too long ago or in the future (check the clocks)' };
  }
  return { status: 'ok' };
}
