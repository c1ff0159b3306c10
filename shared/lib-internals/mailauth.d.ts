// Types for the internal mailauth modules lib-internals/mailauth-dkim.ts composes (mailauth 4.13.3 ships none).
declare module 'mailauth/lib/tools.js' {
  export interface ParsedHeader {
    key: string | null;
    casedKey: string | undefined;
    line: Buffer;
  }
  export function parseHeaders(buf: Buffer): { parsed: ParsedHeader[]; original: Buffer };
  export function getSigningHeaderLines(
    parsed: ParsedHeader[],
    fieldNames: string,
    verify?: boolean,
  ): { keys: string; headers: ParsedHeader[] };
  export function formatSignatureHeaderLine(type: string, values: Record<string, unknown>, folded: boolean): string;
}
declare module 'mailauth/lib/dkim/body/index.js' {
  export function dkimBody(
    canonicalization: string,
    hashAlgo: string,
    maxBodyLength: number | false,
  ): {
    update(chunk: Buffer): void;
    digest(encoding: 'base64'): string;
  };
}
declare module 'mailauth/lib/dkim/header/index.js' {
  import type { getSigningHeaderLines } from 'mailauth/lib/tools.js';
  export function generateCanonicalizedHeader(
    type: string,
    lines: ReturnType<typeof getSigningHeaderLines>,
    options: Record<string, unknown>,
  ): {
    canonicalizedHeader: Buffer;
    dkimHeaderOpts: Record<string, unknown>;
  };
}
