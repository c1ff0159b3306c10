// A free loopback TCP port for a server a test (or a benchmark) starts in a child process.
//
// Ports come from below the kernel's ephemeral range where it leaves room: a port the kernel handed out for a bind to
// port 0 is one it hands out again to any outgoing connection (a database client's, another test's), and between our
// release and the child's bind one did take it (a CI run's MX failed with EADDRINUSE). Below that range only another
// picker like this one could, choosing at random among some 20,000 ports.
import net from 'node:net';
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** A port free a moment ago (holdPort's, released); the caller's server binds it a moment later. */
export async function freePort(): Promise<number> {
  const { port, release } = await holdPort();
  await release();
  return port;
}

/** The ports below the kernel's ephemeral range (ip_local_port_range) and above 10,000, when there are many. */
function quietRange(): [number, number] | null {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return low > 12_000 ? [10_000, low - 1] : null;
  } catch {
    return null;
  }
}

function listenOn(port: number): Promise<{ port: number; release(): Promise<void> }> {
  const hold = net.createServer();
  return new Promise((resolve, reject) =>
    hold.once('error', reject).listen(port, '127.0.0.1', () =>
      resolve({
        port: (hold.address() as net.AddressInfo).port,
        release: () => new Promise<void>((done) => hold.close(() => done())),
      }),
    ),
  );
}

/**
 * A port held by a listening placeholder until `release()`: for a server that must know its port before the world
 * around it starts (seconds in which another test's socket could take a port only probed). Bind right after release.
 */
export async function holdPort(): Promise<{ port: number; release(): Promise<void> }> {
  const range = quietRange();
  for (let tries = 0; range && tries < 20; tries++) {
    try {
      return await listenOn(randomInt(range[0], range[1] + 1));
    } catch {
      // Taken: another.
    }
  }
  return listenOn(0);
}
