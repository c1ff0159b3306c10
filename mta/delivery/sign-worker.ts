// A DKIM signing thread (see sign.ts): receives {id, message, keys, signTime}, answers {id, signatures} or
// {id, error}. Holds no state between messages.
import crypto, { type KeyObject } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { signMessage, type SigningKey } from './sign.ts';

// mailauth parses the PEM private key for every signature, ~0.4 ms of the ~1.4 ms an RSA-2048 signature of a
// 10 KB message costs. A KeyObject is immutable, so this thread (it only signs) keeps each key it has parsed:
// mailauth reaches createPrivateKey through the module object at each call, and finds this one.
const parse = crypto.createPrivateKey;
const parsed = new Map<string, KeyObject>();
crypto.createPrivateKey = ((key: Parameters<typeof parse>[0]) => {
  if (typeof key !== 'object' || !('key' in key) || !Buffer.isBuffer(key.key) || key.format !== 'pem' || 'passphrase' in key) return parse(key);
  const pem = key.key.toString('latin1');
  let found = parsed.get(pem);
  if (!found) {
    found = parse(key);
    if (parsed.size >= 1000) parsed.clear();
    parsed.set(pem, found);
  }
  return found;
}) as typeof parse;

interface Task {
  id: number;
  message: Uint8Array;
  keys: SigningKey[];
  signTime: number;
}

const port = parentPort;
if (!port) throw new Error('sign-worker.ts runs as a worker thread only');

port.on('message', (task: Task) => {
  signMessage(Buffer.from(task.message.buffer, task.message.byteOffset, task.message.byteLength), task.keys, task.signTime)
    .then((signatures) => port.postMessage({ id: task.id, signatures }))
    .catch((err: Error) => port.postMessage({ id: task.id, error: err.message }));
});
