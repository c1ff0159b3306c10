// The relaxed canonicalizations of mta/delivery/dkim.ts against RFC 6376 §3.4.5's example, and a message with
// bare LF line ends signed as the CRLF message the SMTP client sends (the verifiers are in mta-dkim.test.ts).
import test from 'ava';
import { generateKeyPairSync } from 'node:crypto';
import { dkimSignatures, relaxedBody, relaxedHeader } from '../mta/delivery/dkim.ts';

test('RFC 6376 §3.4.5: relaxed header and body', (t) => {
  t.is(relaxedHeader('A', ' X'), 'a:X');
  t.is(relaxedHeader('B ', ' Y\t\r\n\tZ  '), 'b:Y Z');
  t.is(relaxedBody(' C \r\nD \t E\r\n\r\n\r\n'), ' C\r\nD E\r\n');
  t.is(relaxedBody(''), '', 'an empty body stays empty');
  t.is(relaxedBody('\r\n\r\n'), '');
  t.is(relaxedBody('no final line end'), 'no final line end\r\n');
});

test('LF line ends sign as CRLF; every instance of a signed field is covered, bottom-up', (t) => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = { domain: 'example.com', selector: 's1', privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }) as string };
  const crlf = 'From: a@example.com\r\nTo: b@example.net\r\nTo: c@example.net\r\nSubject: hi\r\n\r\nbody \r\n';
  const at = new Date('2026-11-22T00:00:00Z');
  const one = dkimSignatures(Buffer.from(crlf), [key], ['From', 'To', 'Subject'], at);
  const two = dkimSignatures(Buffer.from(crlf.replace(/\r\n/g, '\n')), [key], ['From', 'To', 'Subject'], at);
  t.is(one, two);
  t.regex(one, /h=Subject:To:To:From;/);
  t.regex(one, /^DKIM-Signature: v=1;\r\n a=rsa-sha256;/);
  t.true(one.endsWith('\r\n'));
});
