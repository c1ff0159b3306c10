// A free loopback TCP port for a server a test (or a benchmark) starts in a child process.
import net from 'node:net';

/** A port the kernel just handed out and we released; the caller's server binds it a moment later. */
export async function freePort(): Promise<number> {
  const { port, release } = await holdPort();
  await release();
  return port;
}

/**
 * A port held by a listening placeholder until `release()`: for a server that must know its port before the world
 * around it starts (seconds in which another test's socket could take a port only probed). Bind right after release.
 */
export async function holdPort(): Promise<{ port: number; release(): Promise<void> }> {
  const hold = net.createServer();
  await new Promise<void>((resolve, reject) => hold.once('error', reject).listen(0, '127.0.0.1', () => resolve()));
  const { port } = hold.address() as net.AddressInfo;
  return { port, release: () => new Promise<void>((resolve) => hold.close(() => resolve())) };
}
