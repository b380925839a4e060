import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import bs58 from 'bs58';
import { Keypair, LAMPORTS_PER_SOL, MessageV0, PublicKey, SystemProgram, TransactionMessage, VersionedTransaction, type Connection } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID, createMint, getAccount, getAssociatedTokenAddressSync, getOrCreateAssociatedTokenAccount, mintTo } from '@solana/spl-token';
import { SolanaChain } from '@svc/chain';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { airdrop, registerCitizen, spendsOf } from '../support/citizens';
import { call } from '../support/http';
import { ledgerEntries } from '../support/ledger';
import { withRpcProxy } from '../support/rpcProxy';

interface Citizen {
  id: string;
  handle: string;
  key: string;
  wallet: string;
  keypair: Keypair;
}

describe('POST /api/v1/transfer and POST /api/v1/tx/submit on the local chain', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let base: string;
  let faucet: Keypair;

  beforeAll(async () => {
    db = await freshDatabase('transfer');
    server = await startEmbedded(
      testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('transfer'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }),
      { outboxRecoveryEveryMs: 3_600_000 },
    );
    base = server.url;
    faucet = Keypair.generate();
    await fund(faucet.publicKey.toBase58(), 100);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const connection = (): Connection => server.services.chain.connection;

  const citizen = (prefix: string, extra: Record<string, unknown> = {}, own?: Keypair) => registerCitizen(base, prefix, extra, own) as Promise<Citizen>;
  const fund = (wallet: string, sol: number) => airdrop(connection(), wallet, sol);

  const balance = async (wallet: string) => BigInt(await connection().getBalance(new PublicKey(wallet), 'confirmed'));
  const transfer = (who: Citizen, body: Record<string, unknown>, headers: Record<string, string> = {}) => call(base, 'POST', '/api/v1/transfer', { key: who.key, body, headers });
  const submit = (who: Citizen, body: Record<string, unknown>) => call(base, 'POST', '/api/v1/tx/submit', { key: who.key, body });

  const ledger = () => ledgerEntries(base);
  const actionsOf = async (signature: string) => (await ledger()).filter((e) => e.type === 'ActionRecorded' && e.data.signature === signature);

  async function newMint(programId: PublicKey, decimals: number, holder: string, whole: number): Promise<PublicKey> {
    const mint = await createMint(connection(), faucet, faucet.publicKey, null, decimals, Keypair.generate(), { commitment: 'confirmed' }, programId);
    const account = await getOrCreateAssociatedTokenAccount(connection(), faucet, mint, new PublicKey(holder), false, 'confirmed', { commitment: 'confirmed' }, programId);
    await mintTo(connection(), faucet, mint, account.address, faucet, BigInt(whole) * 10n ** BigInt(decimals), [], { commitment: 'confirmed' }, programId);
    return mint;
  }

  it('moves SOL to a citizen named by handle, agent id or wallet, with the memo on-chain and on the ledger', async () => {
    const [alice, bob] = [await citizen('alice'), await citizen('bob')];
    await fund(alice.wallet, 2);
    const before = await balance(alice.wallet);
    for (const [to, memo] of [[bob.handle.toUpperCase(), 'gm bob'], [bob.id, undefined], [bob.wallet, 'by wallet']] as const) {
      const res = await transfer(alice, { to, amount: 0.25, ...(memo ? { memo } : {}) });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        ok: true,
        executed: true,
        from: alice.wallet,
        to: bob.wallet,
        to_agent_id: bob.id,
        amount: 0.25,
        mint: null,
        memo: memo ?? null,
        signature: expect.any(String),
        explorer: expect.stringContaining(res.body.signature),
        ledger: { seq: expect.any(Number), hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
      });
      const onChain = await connection().getTransaction(res.body.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
      expect(onChain?.meta?.err).toBeNull();
      if (memo) expect(onChain!.meta!.logMessages!.join('\n')).toContain(memo);
      expect(await actionsOf(res.body.signature)).toEqual([
        expect.objectContaining({ actor: alice.id, seq: res.body.ledger.seq, data: expect.objectContaining({ action: 'transfer', wallet: alice.wallet, details: expect.objectContaining({ to: bob.wallet, amount: 0.25, memo: memo ?? null }) }) }),
      ]);
    }
    expect(await balance(bob.wallet)).toBe(750_000_000n);
    expect(before - (await balance(alice.wallet))).toBe(750_000_000n + 3n * 5000n);
    const activity = await call(base, 'GET', '/api/v1/activity');
    expect(JSON.stringify(activity.body)).toContain(alice.wallet);
  });

  it('moves SPL and Token-2022 tokens, creating the recipient’s token account, and refuses what it cannot move', async () => {
    const [alice, bob] = [await citizen('alice'), await citizen('bob')];
    await fund(alice.wallet, 1);
    for (const programId of [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID]) {
      const mint = await newMint(programId, 6, alice.wallet, 1000);
      const destination = getAssociatedTokenAddressSync(mint, new PublicKey(bob.wallet), false, programId);
      expect(await connection().getAccountInfo(destination)).toBeNull();
      const res = await transfer(alice, { to: bob.handle, amount: 12.5, mint: mint.toBase58(), memo: 'tokens' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ executed: true, amount: 12.5, mint: mint.toBase58(), to: bob.wallet });
      expect((await getAccount(connection(), destination, 'confirmed', programId)).amount).toBe(12_500_000n);

      const tooMuch = await transfer(alice, { to: bob.handle, amount: 5000, mint: mint.toBase58() });
      expect(tooMuch.status).toBe(400);
      expect(tooMuch.body.error).toMatchObject({ code: 'insufficient', needed: 5000, available: 987.5 });
      const tooFine = await transfer(alice, { to: bob.handle, amount: 0.0000001, mint: mint.toBase58() });
      expect(tooFine.status).toBe(400);
      expect(tooFine.body.error).toMatchObject({ code: 'invalid_request', field: 'amount' });
      // Bob holds the tokens now but no SOL for the fee: the SOL side is what he lacks.
      const noFee = await transfer(bob, { to: alice.handle, amount: 1, mint: mint.toBase58() });
      expect(noFee.status).toBe(400);
      expect(noFee.body.error).toMatchObject({ code: 'insufficient', available_lamports: 0, needed_lamports: expect.any(Number) });
    }
    const stranger = await newMint(TOKEN_PROGRAM_ID, 0, faucet.publicKey.toBase58(), 5);
    const noBalance = await transfer(alice, { to: bob.handle, amount: 1, mint: stranger.toBase58() });
    expect(noBalance.status).toBe(400);
    expect(noBalance.body.error).toMatchObject({ code: 'no_balance' });
  });

  it('answers every bad input in the envelope, before anything is sent', async () => {
    const [alice, bob] = [await citizen('alice'), await citizen('bob')];
    await fund(alice.wallet, 0.01);
    const cases: Array<[Record<string, unknown>, number, string, string?]> = [
      [{ to: 'not-base58-0OIl-and-too-long-to-be-a-handle-at-all', amount: 1 }, 400, 'invalid_pubkey', 'to'],
      [{ to: bob.handle, amount: 1, mint: 'O0Il' }, 400, 'invalid_pubkey', 'mint'],
      [{ to: bob.handle, amount: 1, mint: Keypair.generate().publicKey.toBase58() }, 404, 'unknown_mint'],
      [{ to: bob.handle, amount: 1, mint: bob.wallet }, 404, 'unknown_mint'],
      [{ to: 'nobody_here', amount: 1 }, 404, 'not_found', 'to'],
      [{ to: 'agent_01NOPE', amount: 1 }, 404, 'not_found', 'to'],
      [{ to: bob.handle, amount: 5 }, 400, 'insufficient'],
      [{ to: bob.handle, amount: -1 }, 400, 'invalid_request', 'amount'],
      [{ to: bob.handle }, 400, 'invalid_request', 'amount'],
      [{ to: bob.handle, amount: 0.001, memo: 'x'.repeat(201) }, 400, 'invalid_request', 'memo'],
      [{ to: alice.handle, amount: 0.001 }, 400, 'invalid_request', 'to'],
      [{ to: bob.handle, amount: 0.001, execute: 'yes' }, 400, 'invalid_request', 'execute'],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await transfer(alice, body);
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status, code });
      if (field) expect(res.body.error.field).toBe(field);
    }
    const poor = await transfer(alice, { to: bob.handle, amount: 5 });
    expect(poor.body.error).toMatchObject({ needed_lamports: 5_000_005_000, available_lamports: 10_000_000 });
    expect((await call(base, 'POST', '/api/v1/transfer', { body: { to: bob.handle, amount: 1 } })).status).toBe(401);
    expect(await spendsOf(connection(), alice.wallet)).toEqual([]);
  });

  it('answers 503 with Retry-After when the chain cannot be reached, and sends nothing', async () => {
    const [alice, bob] = [await citizen('alice'), await citizen('bob')];
    await fund(alice.wallet, 1);
    const down = http.createServer((_req, res) => res.writeHead(503).end('no healthy upstream'));
    await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
    const reachable = server.services.chain;
    server.services.chain = new SolanaChain({ rpcUrl: `http://127.0.0.1:${(down.address() as AddressInfo).port}` });
    try {
      for (const body of [{ to: bob.handle, amount: 0.1 }, { to: bob.handle, amount: 0.1, mint: Keypair.generate().publicKey.toBase58() }]) {
        const res = await transfer(alice, body);
        expect(res.status).toBe(503);
        expect(res.body.error.code).toBe('unavailable');
        expect(res.headers.get('retry-after')).toBe('5');
      }
    } finally {
      await server.services.chain.close();
      server.services.chain = reachable;
      await new Promise((resolve) => down.close(resolve));
    }
    expect(await spendsOf(connection(), alice.wallet)).toEqual([]);
  });

  /**
   * Runs `during` with the service's chain behind a proxy that loses every sendTransaction (a 503 from a load
   * balancer): the signed bytes are stored, and nobody can tell whether they went out.
   */
  function withSendsLost<T>(during: () => Promise<T>): Promise<T> {
    return withRpcProxy(server.services, (raw) => (raw.includes('"sendTransaction"') ? { status: 503, body: 'no healthy upstream' } : undefined), during);
  }

  it('checks stored bytes on the chain as it is now before sending them again: one that would fail is marked failed, unsent', async () => {
    const alice = await citizen('alice');
    await fund(alice.wallet, 1);
    // Less than an empty account's rent, to an address that holds nothing: the runtime would refuse it on landing.
    const nobody = Keypair.generate().publicKey.toBase58();
    const key = `resume-${randomBytes(6).toString('hex')}`;
    const [byRetry, byRecovery] = await withSendsLost(async () => [
      await transfer(alice, { to: nobody, amount: 0.000001 }, { 'idempotency-key': key }),
      await transfer(alice, { to: nobody, amount: 0.000002 }),
    ]);
    for (const lost of [byRetry, byRecovery]) {
      expect([lost.status, lost.body.error.code]).toEqual([503, 'unavailable']);
      expect(lost.body.error.signature).toEqual(expect.any(String));
    }
    const before = await balance(alice.wallet);

    // The client retries with its key: the row's bytes are checked before they go out again, and refused.
    const retry = await transfer(alice, { to: nobody, amount: 0.000001 }, { 'idempotency-key': key });
    expect([retry.status, retry.body.error.code]).toEqual([400, 'send_failed']);
    expect(retry.body.error.message).toMatch(/would fail if sent now .*InsufficientFundsForRent.* not sent/);
    // The other is settled by a recovery pass, which checks the same way.
    const settled = await server.services.pipeline.recover();
    expect(settled.filter((s) => s.outcome === 'failed')).toHaveLength(1);

    for (const lost of [byRetry, byRecovery]) {
      expect(await connection().getSignatureStatus(lost.body.error.signature, { searchTransactionHistory: true })).toMatchObject({ value: null });
      expect(await server.services.pipeline.outbox.bySignature(lost.body.error.signature)).toMatchObject({ state: 'failed' });
    }
    // Not a lamport of fee was paid for either.
    expect(await balance(alice.wallet)).toBe(before);
    // The key keeps its answer.
    expect((await transfer(alice, { to: nobody, amount: 0.000001 }, { 'idempotency-key': key })).body).toEqual(retry.body);
  });

  it('makes exactly one transfer for 50 concurrent identical requests with one Idempotency-Key', async () => {
    const [alice, bob] = [await citizen('alice'), await citizen('bob')];
    await fund(alice.wallet, 1);
    const key = `retry-${randomBytes(6).toString('hex')}`;
    const replies = await Promise.all(Array.from({ length: 50 }, () => transfer(alice, { to: bob.handle, amount: 0.1 }, { 'idempotency-key': key })));
    expect(new Set(replies.map((r) => r.status))).toEqual(new Set([200]));
    expect(new Set(replies.map((r) => JSON.stringify(r.body))).size).toBe(1);
    const signature = replies[0]!.body.signature as string;
    expect(await spendsOf(connection(), alice.wallet)).toEqual([signature]);
    expect(await balance(bob.wallet)).toBe(100_000_000n);
    expect(await actionsOf(signature)).toHaveLength(1);
    // The same key later still answers the first transfer, and another body under it is refused.
    expect((await transfer(alice, { to: bob.handle, amount: 0.1 }, { 'idempotency-key': key })).body.signature).toBe(signature);
    const other = await transfer(alice, { to: bob.handle, amount: 0.2 }, { 'idempotency-key': key });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('idempotency_conflict');
    expect(await spendsOf(connection(), alice.wallet)).toEqual([signature]);
  });

  it('hands out the unsigned transfer with execute=false; signed and submitted, it is recorded as the transfer', async () => {
    const [alice, bob] = [await citizen('alice'), await citizen('bob')];
    await fund(alice.wallet, 1);
    const handed = await transfer(alice, { to: bob.handle, amount: 0.3, memo: 'signed by me', execute: false });
    expect(handed.status).toBe(200);
    expect(handed.body).toMatchObject({ executed: false, fee_payer: alice.wallet, to: bob.wallet, amount: 0.3, reference: expect.any(String), last_valid_block_height: expect.any(Number) });
    expect(handed.body.signature).toBeUndefined();
    const tx = VersionedTransaction.deserialize(Buffer.from(handed.body.transaction, 'base64'));
    expect(tx.message.staticAccountKeys[0]!.toBase58()).toBe(alice.wallet);
    expect(tx.message.staticAccountKeys.map((k) => k.toBase58())).toContain(handed.body.reference);
    expect(await spendsOf(connection(), alice.wallet)).toEqual([]);

    // A dry run first: logs and units, nothing sent.
    tx.sign([alice.keypair]);
    const signed = Buffer.from(tx.serialize()).toString('base64');
    const dry = await submit(alice, { transaction: signed, simulate_only: true });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ simulated: true, err: null, units_consumed: expect.any(Number) });
    expect(dry.body.logs.join('\n')).toContain('signed by me');
    expect(await spendsOf(connection(), alice.wallet)).toEqual([]);

    const sent = await submit(alice, { transaction: signed });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ executed: true, action: 'transfer', signature: bs58.encode(tx.signatures[0]!), ledger: { seq: expect.any(Number) } });
    expect(await balance(bob.wallet)).toBe(300_000_000n);
    expect(await actionsOf(sent.body.signature)).toEqual([expect.objectContaining({ data: expect.objectContaining({ action: 'transfer', details: expect.objectContaining({ memo: 'signed by me' }) }) })]);
    // Submitted twice, it is still one transfer and one record.
    expect((await submit(alice, { transaction: signed })).body.signature).toBe(sent.body.signature);
    expect(await actionsOf(sent.body.signature)).toHaveLength(1);
  });

  it('gives a self-custody citizen the unsigned transaction always; it signs with its own key and submits', async () => {
    const own = Keypair.generate();
    const carol = await citizen('carol', { custody: 'self', public_key: own.publicKey.toBase58() }, own);
    const bob = await citizen('bob');
    await fund(carol.wallet, 1);
    const handed = await transfer(carol, { to: bob.id, amount: 0.2 });
    expect(handed.status).toBe(200);
    expect(handed.body.executed).toBe(false);
    const tx = VersionedTransaction.deserialize(Buffer.from(handed.body.transaction, 'base64'));
    tx.sign([own]);
    const sent = await submit(carol, { transaction: Buffer.from(tx.serialize()).toString('base64') });
    expect(sent.body).toMatchObject({ executed: true, action: 'transfer' });
    expect(await balance(bob.wallet)).toBe(200_000_000n);
  });

  it('records any other transaction of the caller as a plain submit, and refuses one another wallet pays or signs', async () => {
    const [alice, bob] = [await citizen('alice'), await citizen('bob')];
    await fund(alice.wallet, 1);
    await fund(bob.wallet, 1);
    const build = (payer: Keypair, signers: Keypair[], lamports: number) => {
      const ix = SystemProgram.transfer({ fromPubkey: signers.at(-1)!.publicKey, toPubkey: new PublicKey(bob.wallet), lamports });
      return async () => {
        const { blockhash } = await connection().getLatestBlockhash();
        const tx = new VersionedTransaction(new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: blockhash, instructions: [ix] }).compileToV0Message());
        tx.sign([...new Set([payer, ...signers])]);
        return Buffer.from(tx.serialize()).toString('base64');
      };
    };
    const own = await submit(alice, { transaction: await build(alice.keypair, [alice.keypair], 1234)() });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ executed: true, action: 'submit' });
    expect(await actionsOf(own.body.signature)).toEqual([expect.objectContaining({ actor: alice.id, data: expect.objectContaining({ action: 'submit', wallet: alice.wallet }) })]);

    const paidByBob = await submit(alice, { transaction: await build(bob.keypair, [bob.keypair], 1)() });
    expect(paidByBob.status).toBe(400);
    expect(paidByBob.body.error).toMatchObject({ code: 'invalid_request', field: 'transaction' });
    const bobSigns = await submit(alice, { transaction: await build(alice.keypair, [alice.keypair, bob.keypair], 1)() });
    expect(bobSigns.status).toBe(400);
    expect(bobSigns.body.error.message).toMatch(/only your wallet may sign/);
    for (const transaction of ['not base64!', Buffer.from('garbage').toString('base64')]) {
      const bad = await submit(alice, { transaction });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ code: 'invalid_request', field: 'transaction' });
    }
    // Shapes that deserialize but cannot run: no signer at all, or an instruction naming an account it does not list.
    const { blockhash } = await connection().getLatestBlockhash();
    const shaped = (numRequiredSignatures: number, programIdIndex: number) => {
      const message = new MessageV0({
        header: { numRequiredSignatures, numReadonlySignedAccounts: 0, numReadonlyUnsignedAccounts: 1 },
        staticAccountKeys: [new PublicKey(alice.wallet), SystemProgram.programId],
        recentBlockhash: blockhash,
        compiledInstructions: [{ programIdIndex, accountKeyIndexes: [0, 7], data: new Uint8Array([2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]) }],
        addressTableLookups: [],
      });
      const tx = new VersionedTransaction(message);
      if (numRequiredSignatures > 0) tx.sign([alice.keypair]);
      return Buffer.from(tx.serialize()).toString('base64');
    };
    for (const transaction of [shaped(0, 1), shaped(1, 1), shaped(1, 9)]) {
      for (const simulate_only of [true, false]) {
        const bad = await submit(alice, { transaction, simulate_only });
        expect({ status: bad.status, code: bad.body.error?.code, field: bad.body.error?.field }).toEqual({ status: 400, code: 'invalid_request', field: 'transaction' });
      }
    }
    // A transaction the chain refuses answers send_failed with its logs.
    const overdraw = await submit(alice, { transaction: await build(alice.keypair, [alice.keypair], 50 * LAMPORTS_PER_SOL)() });
    expect(overdraw.status).toBe(400);
    expect(['send_failed', 'insufficient']).toContain(overdraw.body.error.code);
    expect(Array.isArray(overdraw.body.error.logs)).toBe(true);
  });
});
