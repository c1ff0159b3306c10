// Attachments given by `path` (resend-api.md §2; CONTRACT "Sending": an https URL fetched with SSRF guards).
// A customer names the URL, so the fetch must not become a probe of the platform's own network:
// - https only (ATTACHMENT_FETCH_ALLOW_HTTP lifts it for tests and private deployments);
// - the host is resolved once and every address checked against the special-purpose ranges (private, loopback,
//   link-local and with it the cloud metadata address 169.254.169.254, CGNAT, ...) by the same check webhooks
//   and auto-configure use (shared/dns/server-address.ts), and the connection goes to the checked address, so a
//   name that rebinds between check and connect reaches nothing new (ATTACHMENT_FETCH_ALLOW_PRIVATE_TARGETS
//   lifts it);
// - redirects are not followed (the next hop would escape the check);
// - the body is read up to what still fits in the message (MAX_MESSAGE_BYTES), and the whole exchange is bounded
//   by ATTACHMENT_FETCH_TIMEOUT_MS.
// Each refusal is a 422 `invalid_attachment` naming `attachments.<i>.path` in `errors`, its reason in the message
// (`Attachment 0 could not be fetched (timeout): ...`; the spec's details carry no reason field).
import http from 'node:http';
import https from 'node:https';
import { readFile } from 'node:fs/promises';
import { isIP, type LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';
import { ServiceError } from '../errors.ts';
import { resolveServer, type AddressResolver } from '../dns/server-address.ts';
import type { Config } from '../config.ts';
import { MAX_MESSAGE_BYTES, type AttachmentInput } from './content.ts';

export type FetchRefusal =
  'invalid_url' | 'not_https' | 'private_target' | 'unreachable' | 'timeout' | 'http_status' | 'too_large';

export interface FetchOptions {
  resolver: AddressResolver;
  allowHttp: boolean;
  allowPrivate: boolean;
  timeoutMs: number;
  /** PEM file of certificate authorities trusted beside the system's (a private CA, a test CA). */
  caFile?: string;
}

export interface FetchedAttachment {
  content: Buffer;
  /** The URL's last path segment, when it makes a filename. */
  filename: string | null;
  /** The response's media type, without parameters. */
  contentType: string | null;
}

/** The raw bytes one message may carry: MAX_MESSAGE_BYTES counts attachments as base64. */
export const MAX_FETCH_BYTES = Math.floor(MAX_MESSAGE_BYTES / 4) * 3;

export function fetchOptions(config: Config, resolver: AddressResolver): FetchOptions {
  return {
    resolver,
    allowHttp: config.ATTACHMENT_FETCH_ALLOW_HTTP,
    allowPrivate: config.ATTACHMENT_FETCH_ALLOW_PRIVATE_TARGETS,
    timeoutMs: config.ATTACHMENT_FETCH_TIMEOUT_MS,
    caFile: config.ATTACHMENT_FETCH_CA_FILE,
  };
}

function refuse(i: number, reason: FetchRefusal, message: string): ServiceError {
  const path = `attachments.${i}.path`;
  return new ServiceError('invalid_attachment', `Attachment ${i} could not be fetched (${reason}): ${message}`, {
    status: 422,
    errors: [{ path, message }],
  });
}

function filenameOf(url: URL): string | null {
  const segment = url.pathname.split('/').pop() ?? '';
  let name: string;
  try {
    name = decodeURIComponent(segment);
  } catch {
    name = segment;
  }
  return name !== '' && name.length <= 255 && !/[\r\n\0/\\]/.test(name) ? name : null;
}

/** Fetches attachment `i`'s `path`, taking at most `maxBytes`. Throws a 422 ServiceError for every refusal. */
export async function fetchAttachment(
  path: string,
  i: number,
  options: FetchOptions,
  maxBytes = MAX_FETCH_BYTES,
): Promise<FetchedAttachment> {
  let url: URL;
  try {
    url = new URL(path);
  } catch {
    throw refuse(i, 'invalid_url', 'the path is not a URL.');
  }
  if (path.length > 2048) throw refuse(i, 'invalid_url', 'the URL is longer than 2048 characters.');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && options.allowHttp))
    throw refuse(i, 'not_https', 'only https:// URLs are fetched.');
  const resolved = await resolveServer(options.resolver, url.hostname, options.allowPrivate);
  if (resolved.status === 'not_found')
    throw refuse(i, 'unreachable', `${url.hostname} was not found (${resolved.error}).`);
  if (resolved.status === 'private')
    throw refuse(
      i,
      'private_target',
      `${url.hostname} is a private, loopback or link-local address; only public servers are fetched.`,
    );
  const address = resolved.addresses[0];
  // Connect to the checked address whatever the name resolves to now; Host, SNI and the certificate check still
  // name the host.
  const lookup: LookupFunction = (_host, opts, cb) => {
    const family = isIP(address);
    if ((opts as { all?: boolean }).all)
      (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else cb(null, address, family);
  };
  const ca =
    options.caFile && url.protocol === 'https:'
      ? [...rootCertificates, await readFile(options.caFile, 'utf8')]
      : undefined;

  return new Promise<FetchedAttachment>((resolve, reject) => {
    const transport = url.protocol === 'https:' ? https : http;
    const req = transport.request(url, {
      method: 'GET',
      lookup,
      agent: false,
      ...(ca ? { ca } : {}),
      headers: { 'user-agent': 'postwerk-attachments', accept: '*/*', 'accept-encoding': 'identity' },
    });
    let settled = false;
    const fail = (err: ServiceError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(err);
    };
    const timer = setTimeout(
      () => fail(refuse(i, 'timeout', `${url.host} did not answer within ${options.timeoutMs / 1000} s.`)),
      options.timeoutMs,
    );
    req.on('error', (err) => fail(refuse(i, 'unreachable', `${url.host} could not be reached (${err.message}).`)));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400)
        return fail(refuse(i, 'http_status', `${url.host} answered ${status}; redirects are not followed.`));
      if (status < 200 || status >= 300) return fail(refuse(i, 'http_status', `${url.host} answered ${status}.`));
      const tooLarge = () =>
        refuse(
          i,
          'too_large',
          `the file is larger than the ${maxBytes} bytes left in the message (the limit is ${MAX_MESSAGE_BYTES / 1024 / 1024} MB, counted as base64).`,
        );
      if (Number(res.headers['content-length'] ?? 0) > maxBytes) return fail(tooLarge());
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) return fail(tooLarge());
        chunks.push(chunk);
      });
      res.on('error', (err) => fail(refuse(i, 'unreachable', `the download broke off (${err.message}).`)));
      res.on('end', () => {
        if (settled) return;
        // A body shorter than announced is a broken download, not a file.
        if (!res.complete) return fail(refuse(i, 'unreachable', 'the download broke off.'));
        settled = true;
        clearTimeout(timer);
        const type = (res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
        resolve({
          content: Buffer.concat(chunks),
          filename: filenameOf(url),
          contentType: /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(type) ? type : null,
        });
      });
    });
    req.end();
  });
}

/**
 * Fetches every attachment given by `path` alone (a `content` wins over a `path`), one after the other, each within
 * what the ones before left of the message. Returns the inputs with the fetched bytes, ready for decodeAttachment:
 * the filename defaults to the URL's last path segment, the media type to the server's when the filename says none.
 */
export async function fetchPathAttachments(
  inputs: AttachmentInput[],
  options: FetchOptions,
): Promise<{ input: AttachmentInput; fetched?: Buffer }[]> {
  const out: { input: AttachmentInput; fetched?: Buffer }[] = [];
  let left = MAX_FETCH_BYTES;
  for (const [i, a] of inputs.entries()) {
    if (!a.path || a.content) {
      out.push({ input: a });
      continue;
    }
    const got = await fetchAttachment(a.path, i, options, left);
    left -= got.content.length;
    const filename = a.filename === undefined || a.filename === null ? got.filename : a.filename;
    const named = typeof filename === 'string' && /\.[A-Za-z0-9]{1,8}$/.test(filename);
    out.push({
      input: { ...a, filename, content_type: a.content_type ?? (named ? null : got.contentType) },
      fetched: got.content,
    });
  }
  return out;
}
