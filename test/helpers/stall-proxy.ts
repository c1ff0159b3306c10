// A loopback TCP proxy whose traffic toward the server can be held: a slow moment of a server (Redis, say) seen by
// only the client that goes through it, without touching the server the other test files share.
import net, { type AddressInfo } from 'node:net';

export interface StallProxy {
  port: number;
  /** Holds the clients' bytes toward the server until release() (they are delivered then, in order). */
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

export async function startStallProxy(target: { host: string; port: number }): Promise<StallProxy> {
  let held = false;
  const waiting: (() => void)[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => s.destroy());
      s.on('close', () => sockets.delete(s));
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('data', (chunk) => {
      if (held) waiting.push(() => upstream.write(chunk));
      else upstream.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    hold() {
      held = true;
    },
    release() {
      held = false;
      for (const send of waiting.splice(0)) send();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
