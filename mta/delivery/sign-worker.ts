// A DKIM signing thread (see sign.ts): receives {id, message, keys, signTime}, answers {id, signatures} or
// {id, error}. Holds no state between messages but the parsed keys (sign.ts parsedKey).
import { parentPort } from 'node:worker_threads';
import { signMessage, type SigningKey } from './sign.ts';

interface Task {
  id: number;
  message: Uint8Array;
  keys: SigningKey[];
  signTime: number;
}

const port = parentPort;
if (!port) throw new Error('sign-worker.ts runs as a worker thread only');

port.on('message', (task: Task) => {
  signMessage(
    Buffer.from(task.message.buffer, task.message.byteOffset, task.message.byteLength),
    task.keys,
    task.signTime,
  )
    .then((signatures) => port.postMessage({ id: task.id, signatures }))
    .catch((err: Error) => port.postMessage({ id: task.id, error: err.message }));
});
