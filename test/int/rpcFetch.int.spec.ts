import zlib from 'node:zlib';
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction, sendAndConfirmTransaction } from '@solana/web3.js';
import { SolanaChain, isRpcUnreachable, rpcFetch } from '@svc/chain';
import { fakeHttp } from '../support/fakeHttp';
import { closeConnection, localnet, type LocalnetClient } from '../support/localnet';

const slotAnswer = (body: string, slot: number) => JSON.stringify({ jsonrpc: '2.0', id: JSON.parse(body).id, result: slot });

describe("the service's JSON-RPC transport under web3.js", () => {
  let t: LocalnetClient;
  beforeAll(async () => {
    t = await localnet();
  });
  afterAll(() => t.close());

  it('carries what web3.js sends and reads: a transfer sent, confirmed and read back', async () => {
    const calls: string[] = [];
    const connection = new Connection(t.connection.rpcEndpoint, {
      commitment: 'confirmed',
      wsEndpoint: (t.connection as unknown as { _rpcWsEndpoint: string })._rpcWsEndpoint,
      fetch: (input, init) => {
        calls.push(JSON.parse(String(init?.body)).method);
        return rpcFetch(input, init);
      },
    });
    try {
      const payer = await t.funded(2);
      const to = Keypair.generate().publicKey;
      const signature = await sendAndConfirmTransaction(connection, new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: LAMPORTS_PER_SOL / 4 })), [payer]);
      expect(await connection.getBalance(to)).toBe(LAMPORTS_PER_SOL / 4);
      const recorded = await connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
      expect(recorded?.meta?.postBalances).toContain(LAMPORTS_PER_SOL / 4);
      expect(calls).toEqual(expect.arrayContaining(['getLatestBlockhash', 'sendTransaction', 'getBalance', 'getTransaction']));
    } finally {
      await closeConnection(connection);
    }
  });

  it('reads answers compressed as the client asked, and keeps its connection alive between calls', async () => {
    const encodings: string[] = [];
    const rpc = await fakeHttp((req, res, body) => {
      encodings.push(String(req.headers['accept-encoding']));
      const slot = encodings.length;
      const text = Buffer.from(slotAnswer(body, slot));
      const [name, bytes] = slot === 1 ? ['gzip', zlib.gzipSync(text)] : slot === 2 ? ['br', zlib.brotliCompressSync(text)] : slot === 3 ? ['deflate', zlib.deflateSync(text)] : ['', text];
      res.writeHead(200, { 'content-type': 'application/json', ...(name ? { 'content-encoding': name } : {}) }).end(bytes);
    });
    try {
      const connection = new Connection(rpc.url, { fetch: rpcFetch });
      const slots: number[] = [];
      for (let i = 0; i < 4; i++) slots.push(await connection.getSlot());
      expect(slots).toEqual([1, 2, 3, 4]);
      expect(encodings.every((e) => /gzip/.test(e) && /br/.test(e) && /deflate/.test(e))).toBe(true);
      expect(rpc.connections()).toBe(1);
    } finally {
      await rpc.close();
    }
  });

  // The global fetch's error for an answer cut short (`terminated`, UND_ERR_SOCKET "other side closed") is not one
  // isRpcUnreachable knew, so such a call was a 500; through this transport it is the RPC being unreachable.
  it("fails as fetch fails, so the service's chain calls the RPC unreachable: refused, 503, or cut mid-answer", async () => {
    const down = await fakeHttp((_req, res) => res.writeHead(503).end('no healthy upstream'));
    const cut = await fakeHttp((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"jsonrpc":"2.0","id":"1","res');
      setImmediate(() => res.socket?.destroy());
    });
    // Closed after the others are bound: a port freed first could be handed to one of them.
    const closed = await fakeHttp();
    await closed.close();
    try {
      const seen: Record<string, string> = {};
      for (const [name, url] of Object.entries({ refused: closed.url, unavailable: down.url, cut: cut.url })) {
        const chain = new SolanaChain({ rpcUrl: url });
        const error = await chain.connection.getSlot().then(
          () => undefined,
          (e: unknown) => e,
        );
        await chain.close();
        seen[name] = isRpcUnreachable(error) ? 'unreachable' : `not called unreachable: ${String(error)}`;
      }
      expect(seen).toEqual({ refused: 'unreachable', unavailable: 'unreachable', cut: 'unreachable' });
      const refused = await rpcFetch(closed.url, { method: 'POST', body: '{}' }).then(
        () => undefined,
        (e: unknown) => e as TypeError & { cause: { code: string } },
      );
      expect(refused?.message).toBe('fetch failed');
      expect(refused?.cause.code).toBe('ECONNREFUSED');
    } finally {
      await Promise.all([down.close(), cut.close()]);
    }
  });
});
