// The DATA reader of both SMTP listeners (the MX and submission): one copy, so the two cannot drift again.
import type { SMTPServerDataStream } from 'smtp-server';
import { SmtpReply } from './reply.ts';

/**
 * The message's bytes. Once smtp-server flags the stream as past `limit` (its SIZE), every chunk read so far and
 * every later one is dropped: the client is still sending and the 552 comes only after its final dot (RFC 5321
 * §4.2.5), so an oversized message is read to the end but never held. Port 25 is open to anyone: holding it
 * would let one connection make the process keep gigabytes.
 */
export async function readMessage(stream: SMTPServerDataStream, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    if (stream.sizeExceeded) chunks.length = 0;
    else chunks.push(chunk as Buffer);
  }
  if (stream.sizeExceeded) throw new SmtpReply(552, `5.3.4 The message is larger than ${limit} bytes`);
  return Buffer.concat(chunks);
}
