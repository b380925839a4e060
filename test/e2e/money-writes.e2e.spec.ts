import { PublicKey } from '@solana/web3.js';
import { airdrop, registerCitizen, type TestCitizen } from '../support/citizens';
import { call } from '../support/http';
import { embeddedService, type EmbeddedService } from '../support/servers';

const WRITES = ['reserve', 'insertSigned', 'markSigned', 'markUnsigned', 'markDone', 'markDoneIn', 'markFailed', 'release', 'renewLease'] as const;

/**
 * What a signed action writes, counted on the running service's own outbox: one insert that holds the signed bytes
 * before the chain sees them, and after it confirmed, the record and the row's `done` in the append's transaction.
 */
describe('the durable writes of a transfer', () => {
  let service: EmbeddedService;
  let base: string;
  let alice: TestCitizen;
  let bob: TestCitizen;

  beforeAll(async () => {
    service = await embeddedService('money_writes');
    base = service.server.url;
    [alice, bob] = [await registerCitizen(base, 'writer'), await registerCitizen(base, 'payee')];
    await airdrop(service.server.services.chain.connection, alice.wallet, 2);
  }, 90_000);
  afterAll(() => service?.close());

  it('is one insert before sending and one transaction after confirming', async () => {
    const { pipeline, chain } = service.server.services;
    const outbox = pipeline.outbox as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const calls: string[] = [];
    for (const name of WRITES) {
      const original = outbox[name]!.bind(outbox);
      outbox[name] = (...args: unknown[]) => {
        calls.push(name);
        return original(...args);
      };
    }
    const connection = chain.connection as unknown as { sendRawTransaction: (...args: unknown[]) => Promise<unknown> };
    const send = connection.sendRawTransaction.bind(connection);
    let writesBeforeSend: string[] | undefined;
    connection.sendRawTransaction = (...args: unknown[]) => {
      writesBeforeSend ??= [...calls];
      return send(...args);
    };
    try {
      const reply = await call(base, 'POST', '/api/v1/transfer', { key: alice.key, body: { to: bob.handle, amount: 0.01 }, headers: { 'idempotency-key': 'writes-1' } });
      expect(reply.status).toBe(200);
      expect(writesBeforeSend).toEqual(['insertSigned']);
      expect(calls).toEqual(['insertSigned', 'markDoneIn']);
      const row = await service.server.services.database.db.selectFrom('vault.chain_outbox').selectAll().where('signature', '=', reply.body.signature).executeTakeFirstOrThrow();
      expect([row.state, row.receipt]).toEqual(['done', reply.body.ledger]);

      // The same request again finds its row and writes nothing.
      calls.length = 0;
      const again = await call(base, 'POST', '/api/v1/transfer', { key: alice.key, body: { to: bob.handle, amount: 0.01 }, headers: { 'idempotency-key': 'writes-1' } });
      expect([again.status, again.body.signature]).toEqual([200, reply.body.signature]);
      expect(calls).toEqual([]);
    } finally {
      for (const name of WRITES) delete outbox[name];
      delete (connection as Partial<typeof connection>).sendRawTransaction;
    }
  });

  it('reads no balance before a SOL transfer, and tells a shortfall the chain refused as the check before signing would', async () => {
    const connection = service.server.services.chain.connection as unknown as { getBalance: (...args: unknown[]) => Promise<number> };
    const getBalance = connection.getBalance.bind(connection);
    let reads = 0;
    connection.getBalance = (...args: unknown[]) => {
      reads += 1;
      return getBalance(...args);
    };
    try {
      const paid = await call(base, 'POST', '/api/v1/transfer', { key: alice.key, body: { to: bob.handle, amount: 0.01 } });
      expect([paid.status, reads]).toEqual([200, 0]);

      const held = await getBalance(new PublicKey(alice.wallet), 'confirmed');
      const short = await call(base, 'POST', '/api/v1/transfer', { key: alice.key, body: { to: bob.handle, amount: 5 } });
      expect(short.status).toBe(400);
      expect(short.body.error).toMatchObject({ code: 'insufficient', needed_lamports: 5_000_005_000, available_lamports: held });
      // Nothing of a transaction that never landed: no signature, none of its logs.
      expect(short.body.error).not.toHaveProperty('signature');
      expect(short.body.error.logs ?? []).toEqual([]);
      expect(reads).toBe(1);
    } finally {
      delete (connection as Partial<typeof connection>).getBalance;
    }
  });
});
