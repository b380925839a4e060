import bs58 from 'bs58';
import { ComputeBudgetProgram, Keypair, SystemProgram, TransactionMessage, VersionedTransaction, type TransactionInstruction } from '@solana/web3.js';
import {
  BlockhashKeeper,
  ChainError,
  assertCanPay,
  balanceLamports,
  buildSolTransfer,
  confirmSignature,
  messageFee,
  isBlockhashExpired,
  keypairFromSecret,
  recentBlockhash,
  sendAndConfirm,
  signTransaction,
  signatureStatus,
  solToLamports,
  withReference,
  type WalletAddress,
} from '@svc/chain';
import { findHandedOut } from '@svc/actions';
import { localnet, type LocalnetClient } from '../support/localnet';

const SLOT_MS = 400;
const BLOCKHASH_VALIDITY_SLOTS = 150;

describe('libs/chain against the local chain', () => {
  let net: LocalnetClient;
  // The chain's wall clock; moving it on expires blockhashes without waiting a minute.
  let skewMs = 0;

  beforeAll(async () => {
    net = await localnet({ now: () => Date.now() + skewMs });
  }, 60_000);
  afterAll(async () => {
    await net?.close();
  });

  async function signedTransfer(from: Keypair, to: WalletAddress, lamports: bigint) {
    const recent = await recentBlockhash(net.connection);
    const transfer = buildSolTransfer({ from: from.publicKey, to, lamports }, recent);
    const fee = messageFee(transfer.message);
    return { fee, signed: signTransaction(transfer, [from], recent) };
  }

  async function expectChainError(promise: Promise<unknown>): Promise<ChainError> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ChainError);
    return error as ChainError;
  }

  it('lands a SOL transfer: the receiver gets exactly the amount, the sender pays it plus the fee', async () => {
    const sender = await net.funded(2);
    const receiver = Keypair.generate().publicKey;
    const lamports = solToLamports(0.123456789);
    const before = await balanceLamports(net.connection, sender.publicKey);
    const { fee, signed } = await signedTransfer(keypairFromSecret(sender.secretKey), receiver, lamports);
    expect(fee).toBe(5000n);

    const { signature } = await sendAndConfirm(net.connection, signed);

    expect(signature).toBe(signed.signature);
    expect(await balanceLamports(net.connection, receiver)).toBe(123_456_789n);
    expect(await balanceLamports(net.connection, sender.publicKey)).toBe(before - lamports - fee);
    const landed = await net.connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(landed?.meta?.fee).toBe(5000);
    expect(landed?.meta?.err).toBeNull();
    expect(await signatureStatus(net.connection, signature)).toEqual({ state: 'confirmed', slot: expect.any(Number) });
  });

  it("computes a message's fee as the chain charges it, with and without a priority price and a unit limit", async () => {
    const payer = Keypair.generate();
    const cosigner = Keypair.generate();
    const recent = await recentBlockhash(net.connection);
    const transfer = SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: cosigner.publicKey, lamports: 1 });
    const custom = { programId: Keypair.generate().publicKey, keys: [], data: Buffer.alloc(0) } as TransactionInstruction;
    const price = (microLamports: number) => ComputeBudgetProgram.setComputeUnitPrice({ microLamports });
    const limit = (units: number) => ComputeBudgetProgram.setComputeUnitLimit({ units });
    const cases: TransactionInstruction[][] = [
      [transfer],
      [price(0), transfer],
      [price(1_234_567), transfer],
      [price(1_234_567), transfer, custom],
      [limit(150_000), price(999), transfer, custom],
      [limit(2_000_000), price(10_000), custom],
      [price(50_000), SystemProgram.transfer({ fromPubkey: cosigner.publicKey, toPubkey: payer.publicKey, lamports: 1 }), transfer],
    ];
    for (const [i, instructions] of cases.entries()) {
      const message = new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: recent.blockhash, instructions }).compileToV0Message();
      const { value } = await net.connection.getFeeForMessage(message, 'confirmed');
      expect([i, messageFee(message)]).toEqual([i, BigInt(value!)]);
    }
  });

  it('keeps one recent blockhash for every action: read once however many ask, refreshed in the background, never stale', async () => {
    let reads = 0;
    const counted = new Proxy(net.connection, {
      get(target, name, receiver) {
        if (name === 'getLatestBlockhash') reads += 1;
        return Reflect.get(target, name, receiver);
      },
    });
    let now = 0;
    const keeper = new BlockhashKeeper(() => counted, () => now);
    const first = await Promise.all(Array.from({ length: 50 }, () => keeper.recent()));
    expect([reads, new Set(first.map((r) => r.blockhash)).size]).toEqual([1, 1]);
    now = 900;
    expect(await keeper.recent()).toEqual(first[0]);
    expect(reads).toBe(1);
    // Older than a second: still handed out at once, while one read brings a newer one for the next caller.
    now = 2_000;
    expect(await keeper.recent()).toEqual(first[0]);
    expect(reads).toBe(2);
    // Older than five seconds: nobody gets it any more; the caller waits for a fresh read (the one in flight, if any).
    now = 9_000;
    const fresh = await keeper.recent();
    expect(reads).toBeLessThanOrEqual(3);
    expect(await isBlockhashExpired(net.connection, fresh.lastValidBlockHeight)).toBe(false);
    // With no read in flight, a blockhash that old is never handed out: the caller waits for the read.
    const settled = reads;
    now = 20_000;
    await keeper.recent();
    expect(reads).toBe(settled + 1);
  });

  it('maps a transfer larger than the balance to insufficient, with the program logs, and moves nothing', async () => {
    const sender = await net.funded(0.01);
    const receiver = Keypair.generate().publicKey;
    const { signed } = await signedTransfer(sender, receiver, solToLamports(1));

    const error = await expectChainError(sendAndConfirm(net.connection, signed));

    expect(error.code).toBe('insufficient');
    expect(error.logs.join('\n')).toMatch(/insufficient lamports/);
    expect(error.rejection).toEqual({ code: 'insufficient', message: expect.any(String), details: { logs: error.logs } });
    expect(await balanceLamports(net.connection, sender.publicKey)).toBe(10_000_000n);
    expect(await signatureStatus(net.connection, signed.signature)).toEqual({ state: 'not_found' });
  });

  it('maps a payer the chain has never credited, and one left below the rent minimum, to insufficient', async () => {
    const ghost = Keypair.generate();
    const { signed } = await signedTransfer(ghost, Keypair.generate().publicKey, 1_000_000n);
    expect((await expectChainError(sendAndConfirm(net.connection, signed))).code).toBe('insufficient');

    const sender = await net.funded(0.01);
    const almostAll = 10_000_000n - 5000n - 100n;
    const leftBelowRent = await signedTransfer(sender, Keypair.generate().publicKey, almostAll);
    const refused = await expectChainError(sendAndConfirm(net.connection, leftBelowRent.signed));
    expect(refused.code).toBe('insufficient');
    expect(refused.message).toMatch(/rent/);
  });

  it('checks a payment before signing: amount plus fee, and the rent an account keeps', async () => {
    const sender = await net.funded(0.01);
    await expect(assertCanPay(net.connection, sender.publicKey, { lamports: 9_995_000n, fee: 5000n })).resolves.toEqual({ balance: 10_000_000n });
    await expect(assertCanPay(net.connection, sender.publicKey, { lamports: 1_000_000n, fee: 5000n })).resolves.toEqual({ balance: 10_000_000n });
    const short = await expectChainError(assertCanPay(net.connection, sender.publicKey, { lamports: 10_000_000n, fee: 5000n }));
    expect(short.code).toBe('insufficient');
    expect(short.message).toContain('holds 0.01 SOL; this needs 0.010005 SOL (0.01 SOL + 0.000005 SOL network fee)');
    const rent = await expectChainError(assertCanPay(net.connection, sender.publicKey, { lamports: 9_994_000n, fee: 5000n }));
    expect(rent.message).toMatch(/would leave 0\.000001 SOL, below the 0\.00089088 SOL/);
  });

  it('reports a transaction that landed and failed as tx_failed with its logs, and its status as failed', async () => {
    const sender = await net.funded(0.01);
    const { signed } = await signedTransfer(sender, Keypair.generate().publicKey, solToLamports(1));

    // Without the simulation the RPC forwards it, as a validator does, and it fails on-chain.
    const error = await expectChainError(sendAndConfirm(net.connection, signed, { resend: true }));

    expect(error.code).toBe('tx_failed');
    expect(error.signature).toBe(signed.signature);
    expect(error.logs.join('\n')).toMatch(/insufficient lamports/);
    const status = await signatureStatus(net.connection, signed.signature);
    expect(status).toMatchObject({ state: 'failed', err: { InstructionError: [0, { Custom: 1 }] } });
    expect(status.state === 'failed' && status.logs).toEqual(error.logs);
    expect(await balanceLamports(net.connection, sender.publicKey)).toBe(10_000_000n - 5000n);
  });

  it('reports an unknown signature as not found', async () => {
    const { signed } = await signedTransfer(Keypair.generate(), Keypair.generate().publicKey, 1n);
    expect(await signatureStatus(net.connection, signed.signature)).toEqual({ state: 'not_found' });
  });

  it('tells when a blockhash has expired, refuses a send on it and reports a never-sent transaction as expired', async () => {
    const sender = await net.funded(1);
    const { signed } = await signedTransfer(sender, Keypair.generate().publicKey, 1_000_000n);
    expect(await isBlockhashExpired(net.connection, signed.lastValidBlockHeight)).toBe(false);

    skewMs += (BLOCKHASH_VALIDITY_SLOTS + 2) * SLOT_MS;
    expect(await isBlockhashExpired(net.connection, signed.lastValidBlockHeight)).toBe(true);

    const waited = await expectChainError(confirmSignature(net.connection, signed));
    expect(waited.code).toBe('send_failed');
    expect(waited.message).toMatch(/expired/);
    const sent = await expectChainError(sendAndConfirm(net.connection, signed));
    expect(sent.code).toBe('send_failed');
    expect(sent.message).toMatch(/Blockhash not found/);
    expect(await signatureStatus(net.connection, signed.signature)).toEqual({ state: 'not_found' });
    expect(await balanceLamports(net.connection, sender.publicKey)).toBe(1_000_000_000n);
  });

  describe('finding a handed-out transaction by its reference key', () => {
    /** Sends `instructions` from `payer` and waits for them to confirm. */
    async function send(payer: Keypair, instructions: TransactionInstruction[]): Promise<string> {
      const recent = await recentBlockhash(net.connection);
      const tx = new VersionedTransaction(new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: recent.blockhash, instructions }).compileToV0Message());
      return (await sendAndConfirm(net.connection, signTransaction(tx, [payer], recent))).signature;
    }

    it('finds the handout however many other transactions name its reference, and only a transaction doing what it asked', async () => {
      const [poster, griefer] = [await net.funded(1), await net.funded(1)];
      const winner = Keypair.generate().publicKey;
      const reference = Keypair.generate().publicKey;
      const sinceSlot = await net.connection.getSlot('confirmed');
      const pay = (from: Keypair, lamports: bigint) => SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: winner, lamports });
      const recent = await recentBlockhash(net.connection);
      const handedOut = new VersionedTransaction(
        new TransactionMessage({ payerKey: poster.publicKey, recentBlockhash: recent.blockhash, instructions: withReference([pay(poster, 7_000_000n)], reference) }).compileToV0Message(),
      ).message;
      expect(await findHandedOut(net.connection, handedOut, reference.toBase58(), sinceSlot, 5)).toBeUndefined();

      // The poster's wallet set its own priority fee and blockhash: the transaction still does what was handed out.
      const paid = await send(poster, withReference([ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1 }), pay(poster, 7_000_000n)], reference));

      // Anyone may name the reference: many cheap transactions, and one that pays the winner one lamport short.
      await send(griefer, withReference([pay(griefer, 6_999_999n)], reference));
      for (let i = 0; i < 12; i++) {
        await send(griefer, withReference([SystemProgram.transfer({ fromPubkey: griefer.publicKey, toPubkey: griefer.publicKey, lamports: BigInt(i + 1) })], reference));
      }

      // Pages of five: the payment lies three pages deep.
      const found = await findHandedOut(net.connection, handedOut, reference.toBase58(), sinceSlot, 5);
      expect(found).toMatchObject({ signature: paid, slot: expect.any(Number) });
      // The wire bytes are the signed transaction as it landed.
      expect(bs58.encode(VersionedTransaction.deserialize(found!.wire).signatures[0]!)).toBe(paid);
      const shortOne = new VersionedTransaction(
        new TransactionMessage({ payerKey: poster.publicKey, recentBlockhash: recent.blockhash, instructions: withReference([pay(poster, 6_000_000n)], reference) }).compileToV0Message(),
      ).message;
      expect(await findHandedOut(net.connection, shortOne, reference.toBase58(), sinceSlot, 5)).toBeUndefined();
      // Nothing that landed before the hand-out counts.
      expect(await findHandedOut(net.connection, handedOut, reference.toBase58(), found!.slot + 1, 5)).toBeUndefined();
    }, 30_000);
  });
});
