import net from 'node:net';

function listenOn(port: number): Promise<net.Server | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

const close = (server: net.Server | undefined) => server && new Promise((resolve) => server.close(resolve));

/** A port that was just free: a server of the test's own can take it, and connecting to it is refused. */
export async function freePort(): Promise<number> {
  const server = (await listenOn(0))!;
  const { port } = server.address() as net.AddressInfo;
  await close(server);
  return port;
}

/** Two free consecutive ports: a chain's JSON-RPC and, as every Solana client assumes, its WebSocket on the next one. */
export async function freePortPair(): Promise<number> {
  for (;;) {
    const first = (await listenOn(0))!;
    const port = (first.address() as net.AddressInfo).port;
    const second = port < 65535 ? await listenOn(port + 1) : undefined;
    await Promise.all([first, second].map(close));
    if (second) return port;
  }
}
