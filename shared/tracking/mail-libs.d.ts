// mailsplit, libqp and libbase64 (nodemailer's author's MIME primitives, as mailparser uses them) ship no types: the
// parts shared/tracking/mime.ts uses (their READMEs).
declare module 'mailsplit' {
  import { Transform } from 'node:stream';

  interface SplitHeaders {
    update(key: string, value: string): void;
  }

  /** One MIME node as the splitter emits it (`type: 'node'`). */
  interface SplitNode {
    type: 'node';
    contentType: string | false;
    /** Content-Transfer-Encoding, lower case; '' when absent. */
    encoding: string;
    charset: string | false;
    disposition: string | false;
    multipart: string | false;
    headers: SplitHeaders;
    /** The header block as it will be written (the original bytes unless changed), blank line included. */
    getHeaders(): Buffer;
  }

  /** Body bytes of the last node (`body`), or bytes between nodes: preamble, boundaries, epilogue (`data`). */
  interface SplitChunk {
    type: 'body' | 'data';
    value: Buffer;
  }

  export class Splitter extends Transform {
    constructor(options?: { ignoreEmbedded?: boolean; maxHeadSize?: number; maxChildNodes?: number });
    on(event: 'data', listener: (chunk: SplitNode | SplitChunk) => void): this;
    on(event: 'end', listener: () => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
  }
}

declare module 'libqp' {
  /** Quoted-printable of `buffer`, unwrapped. */
  export function encode(buffer: Buffer): string;
  export function decode(str: string): Buffer;
  /** Soft line breaks (`=\r\n`) so no line is longer than `lineLength`. */
  export function wrap(str: string, lineLength?: number): string;
}

declare module 'libbase64' {
  export function encode(buffer: Buffer): string;
  /** Lines of `lineLength`, CRLF between them. */
  export function wrap(str: string, lineLength?: number): string;
}
