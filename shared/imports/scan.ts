// What the api learns about an uploaded CSV while it streams it to storage, without parsing it (the worker parses):
// its size (refused past 50 MB), that it is UTF-8 throughout, its header row (the bytes of the first record, for the
// column checks), how many data rows it has, that every quoted field is closed, and that no row is larger than
// MAX_ROW_BYTES. One pass over the bytes, a few states: a record ends at \n, \r\n or \r outside quotes (mixed line
// endings are fine), empty lines are no records, a UTF-8 byte order mark at the start is skipped. The worker's
// parser (shared/imports/parse.ts) reads the same records by the same rules.
import { Transform, type TransformCallback } from 'node:stream';
import { fileTooLarge, formError, IMPORT_MAX_BYTES, MAX_ROW_BYTES } from './limits.ts';

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;
// Where the scan is in a record: as the parser's states (csv-parse with relax_quotes, shared/imports/parse.ts).
const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
const QUOTE_IN_QUOTED = 3;

export interface ScanResult {
  bytes: number;
  /** The first record's bytes (the header row), the byte order mark left out; empty for an empty file. */
  header: Buffer;
  /** Records after the header. */
  rows: number;
}

/** The trailing bytes of `buf` that begin a UTF-8 sequence it does not complete (0-3 bytes). */
function incompleteTail(buf: Buffer): Buffer {
  // Copied: the chunk it comes from is not kept.
  for (let back = 1; back <= Math.min(3, buf.length); back++) {
    const b = buf[buf.length - back];
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back for its lead
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? Buffer.from(buf.subarray(buf.length - back)) : Buffer.alloc(0);
  }
  return Buffer.alloc(0);
}

export class CsvScanner extends Transform {
  private bytes = 0;
  private decoder = new TextDecoder('utf-8', { fatal: true });
  private previousTail: Buffer = Buffer.alloc(0);
  private line = 1;
  private state = FIELD_START;
  private quoteLine = 0;
  private inRecord = false;
  private recordBytes = 0;
  private recordLine = 1;
  private records = 0;
  private lastWasCr = false;
  private bomChecked = false;
  private headerParts: Buffer[] = [];
  private headerDone = false;

  constructor(private readonly maxBytes = IMPORT_MAX_BYTES) {
    super();
  }

  result(): ScanResult {
    return { bytes: this.bytes, header: Buffer.concat(this.headerParts), rows: Math.max(0, this.records - 1) };
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) return done(fileTooLarge());
    try {
      this.checkUtf8(chunk);
      let start = 0;
      if (!this.bomChecked) {
        // Only once three bytes are in (a first chunk shorter than the mark is not worth the bookkeeping).
        this.bomChecked = true;
        if (chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) start = 3;
      }
      this.scan(chunk, start);
    } catch (err) {
      return done(err as Error);
    }
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    try {
      this.decoder.decode(new Uint8Array(0)); // an incomplete sequence at the very end
    } catch {
      return done(formError('file', `is not UTF-8: the file ends inside a character (line ${this.line})`));
    }
    if (this.state === QUOTED)
      return done(formError('file', `has a quoted field opened on line ${this.quoteLine} that is never closed`));
    this.endRecord();
    done();
  }

  private checkUtf8(chunk: Buffer): void {
    try {
      this.decoder.decode(chunk, { stream: true });
    } catch {
      throw formError('file', `is not UTF-8: line ${this.badLine(chunk)} has a byte sequence that is not UTF-8`);
    }
    this.previousTail = incompleteTail(chunk);
  }

  /** The line of the first invalid byte of `chunk` (rare: only on the way to a refusal). */
  private badLine(chunk: Buffer): number {
    const valid = (n: number) => {
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat([this.previousTail, chunk.subarray(0, n)]), {
          stream: true,
        });
        return true;
      } catch {
        return false;
      }
    };
    let lo = 0;
    let hi = chunk.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (valid(mid)) lo = mid;
      else hi = mid - 1;
    }
    let line = this.line;
    for (let i = 0; i < lo; i++) if (chunk[i] === LF) line++;
    return line;
  }

  private endRecord(): void {
    if (!this.inRecord) return;
    this.inRecord = false;
    this.records++;
    if (this.records === 1) this.headerDone = true;
  }

  private scan(chunk: Buffer, start: number): void {
    let headerFrom = this.headerDone ? -1 : start;
    let state = this.state;
    for (let i = start; i < chunk.length; i++) {
      const b = chunk[i];
      if (b === LF || b === CR) {
        if (b === CR || !this.lastWasCr) this.line++;
        this.lastWasCr = b === CR;
        if (state === QUOTED) continue; // a line break inside a quoted field is the field's
        state = FIELD_START;
        if (!this.inRecord) continue; // an empty line (or the LF of a CRLF) is no record
        this.endRecord();
        if (headerFrom >= 0) {
          this.headerParts.push(Buffer.from(chunk.subarray(headerFrom, i)));
          headerFrom = -1;
        }
        continue;
      }
      this.lastWasCr = false;
      if (!this.inRecord) {
        this.inRecord = true;
        this.recordBytes = 0;
        this.recordLine = this.line;
      }
      if (++this.recordBytes > MAX_ROW_BYTES)
        throw formError(
          'file',
          `has a row larger than ${MAX_ROW_BYTES} bytes (the row starting on line ${this.recordLine})`,
        );
      if (state === FIELD_START) {
        if (b === QUOTE) {
          state = QUOTED;
          this.quoteLine = this.line;
        } else if (b !== COMMA) state = UNQUOTED;
      } else if (state === UNQUOTED) {
        if (b === COMMA) state = FIELD_START;
      } else if (state === QUOTED) {
        if (b === QUOTE) state = QUOTE_IN_QUOTED;
      } else {
        // After a quote inside a quoted field: "" is an escaped quote, a comma ends the field, anything else makes the
        // field literal to its end (the parser's relax_quotes).
        state = b === QUOTE ? QUOTED : b === COMMA ? FIELD_START : UNQUOTED;
      }
    }
    this.state = state;
    if (headerFrom >= 0 && !this.headerDone) this.headerParts.push(Buffer.from(chunk.subarray(headerFrom)));
  }
}
