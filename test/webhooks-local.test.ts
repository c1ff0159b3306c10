// Webhooks to a local receiver, as a developer first tries them: each refusal names the setting that allows it.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';

let strict: Platform;
let local: Platform;

test.before(async () => {
  strict = await startPlatform();
  local = await startPlatform({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
});

test.after.always(async () => {
  await strict?.close();
  await local?.close();
});

const create = async (p: Platform, endpoint: string) => {
  const team = await p.createTeam('Local hooks');
  return p.request('POST', '/webhooks', { key: team.key, body: { endpoint, events: ['email.sent'] } });
};

test('http:// is refused naming WEBHOOK_ALLOW_HTTP; a private or loopback host naming WEBHOOK_ALLOW_PRIVATE_TARGETS', async (t) => {
  const plain = await create(strict, 'http://hooks.example.com/in');
  t.is(plain.status, 422);
  t.regex(plain.body.message, /WEBHOOK_ALLOW_HTTP=true/);
  t.regex(plain.body.errors[0].message, /WEBHOOK_ALLOW_HTTP=true/);
  for (const endpoint of [
    'https://127.0.0.1:8443/hook',
    'https://localhost/hook',
    'https://[::1]/hook',
    'https://10.1.2.3/x',
  ]) {
    const refused = await create(strict, endpoint);
    t.is(refused.status, 422, endpoint);
    t.regex(refused.body.message, /WEBHOOK_ALLOW_PRIVATE_TARGETS=true/, endpoint);
  }
  t.is((await create(strict, 'https://hooks.example.com/in')).status, 201);
});

test('with both settings on, a local http receiver is taken', async (t) => {
  const res = await create(local, 'http://127.0.0.1:8000/hook');
  t.is(res.status, 201, res.text);
});
