import bs58 from 'bs58';
import {
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SendTransactionError,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
  sendAndConfirmTransaction,
} from '@solana/web3.js';
import { createAssociatedTokenAccountIdempotent, createMint, getAccount, getAssociatedTokenAddressSync, mintTo, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { localnet, rpc, type LocalnetClient } from '../support/localnet';
import { AUTHORITY, COUNTER, PROBE_ID, counterKeys, probe, probeIx } from '../support/probeProgram';

async function expectSendError(promise: Promise<unknown>): Promise<SendTransactionError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the transaction to be refused');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SendTransactionError);
  return error as SendTransactionError;
}

/**
 * What the local chain does with a transaction it is sent, as web3.js sees it: it lands whole or changes nothing but
 * the fee, and is refused when its blockhash is stale or a signature is missing. The calls that read the chain are
 * in localnet-rpc.int.spec.ts.
 */
describe('localnet JSON-RPC through web3.js and spl-token', () => {
  let t: LocalnetClient;
  beforeAll(async () => {
    t = await localnet({ programs: [probe] });
  });
  afterAll(() => t.close());

  test('a failing preflight raises SendTransactionError with the logs and changes nothing', async () => {
    const a = await t.funded(1);
    const before = await t.connection.getBalance(a.publicKey);
    const error = await expectSendError(
      sendAndConfirmTransaction(t.connection, new Transaction().add(SystemProgram.transfer({ fromPubkey: a.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 5 * LAMPORTS_PER_SOL })), [a]),
    );
    expect(error.message).toContain('Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1');
    expect(error.logs?.some((l) => l.includes('insufficient lamports'))).toBe(true);
    expect(await t.connection.getBalance(a.publicKey)).toBe(before);
  });

  test('with skipPreflight a failing transaction lands, charged its fee only', async () => {
    const a = await t.funded(1);
    const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: a.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 5 * LAMPORTS_PER_SOL }));
    const latest = await t.connection.getLatestBlockhash();
    tx.recentBlockhash = latest.blockhash;
    tx.feePayer = a.publicKey;
    tx.sign(a);
    const signature = await t.connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    const confirmation = await t.connection.confirmTransaction({ signature, ...latest });
    expect(confirmation.value.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(await t.connection.getBalance(a.publicKey)).toBe(LAMPORTS_PER_SOL - 5000);
  });

  test('a resend of a landed transaction is AlreadyProcessed with preflight, and returns its signature without', async () => {
    const a = await t.funded(1);
    const tx = new Transaction({ ...(await t.connection.getLatestBlockhash()), feePayer: a.publicKey }).add(
      SystemProgram.transfer({ fromPubkey: a.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
    );
    tx.sign(a);
    const raw = tx.serialize();
    const signature = await t.connection.sendRawTransaction(raw);
    expect(await t.connection.sendRawTransaction(raw, { skipPreflight: true })).toBe(signature);
    const again = await expectSendError(t.connection.sendRawTransaction(raw));
    expect(again.message).toContain('This transaction has already been processed');
    expect(await t.connection.getBalance(a.publicKey)).toBe(LAMPORTS_PER_SOL - 1_005_000);
  });

  describe('an emulated program inside one atomic transaction', () => {
    test('own-account writes and a CPI land together with the native instructions around them', async () => {
      const payer = await t.funded(2);
      const receiver = Keypair.generate().publicKey;
      const signature = await sendAndConfirmTransaction(
        t.connection,
        new Transaction().add(
          SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: receiver, lamports: 1_000_000 }),
          probeIx(0, counterKeys(payer.publicKey)),
          probeIx(1, counterKeys(payer.publicKey)),
        ),
        [payer],
      );
      const counter = await t.connection.getAccountInfo(COUNTER);
      expect(counter?.owner.equals(PROBE_ID)).toBe(true);
      expect(counter?.data.readBigUInt64LE(0)).toBe(1n);
      expect(counter?.lamports).toBe(await t.connection.getMinimumBalanceForRentExemption(8));
      expect(await t.connection.getBalance(receiver)).toBe(1_000_000);
      const recorded = await t.connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
      expect(recorded?.meta?.fee).toBe(5000);
      expect(recorded?.meta?.logMessages).toEqual(
        expect.arrayContaining([`Program ${PROBE_ID.toBase58()} invoke [1]`, 'Program 11111111111111111111111111111111 invoke [2]', 'Program log: count 1']),
      );
      // The counter's creation is a System CPI of instruction 1, reported by account indexes as the RPC does.
      const keys = recorded!.transaction.message.staticAccountKeys;
      const inner = recorded!.meta!.innerInstructions!;
      expect(inner.map((i) => i.index)).toEqual([1]);
      const [cpi] = inner[0].instructions;
      expect(keys[cpi.programIdIndex].equals(SystemProgram.programId)).toBe(true);
      expect(cpi.accounts.map((i) => keys[i].toBase58())).toEqual([payer.publicKey.toBase58(), COUNTER.toBase58()]);
      expect((cpi as { stackHeight?: number }).stackHeight).toBe(2);
      const simulation = new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: (await t.connection.getLatestBlockhash()).blockhash, instructions: [probeIx(0, counterKeys(payer.publicKey))] }).compileToV0Message();
      const simulated = await t.connection.simulateTransaction(new VersionedTransaction(simulation), { innerInstructions: true });
      expect(simulated.value.err).toEqual({ InstructionError: [0, 'AccountAlreadyInitialized'] });
      const parsed = await t.connection.getParsedTransaction(signature, { maxSupportedTransactionVersion: 0 });
      const parsedCpi = parsed?.meta?.innerInstructions?.[0].instructions[0] as { program?: string; parsed?: { type: string; info: { destination: string } } };
      expect(parsedCpi.program).toBe('system');
      expect(parsedCpi.parsed).toMatchObject({ type: 'transfer', info: { destination: COUNTER.toBase58() } });
      const top = parsed?.transaction.message.instructions[0] as { parsed?: { type: string; info: { lamports: number } } };
      expect(top.parsed).toEqual({ type: 'transfer', info: { source: payer.publicKey.toBase58(), destination: receiver.toBase58(), lamports: 1_000_000 } });
    });

    test('an event is a Program data log and an emit_cpi self-invocation to the event authority', async () => {
      const payer = await t.funded(1);
      const [eventAuthority] = PublicKey.findProgramAddressSync([Buffer.from('__event_authority')], PROBE_ID);
      const signature = await sendAndConfirmTransaction(t.connection, new Transaction().add(probeIx(6, [{ pubkey: eventAuthority, isSigner: false, isWritable: false }])), [payer]);
      const recorded = await t.connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
      expect(recorded?.meta?.logMessages).toContain(`Program data: ${Buffer.from('0102030405060708aa', 'hex').toString('base64')}`);
      const [self] = recorded!.meta!.innerInstructions![0].instructions;
      const keys = recorded!.transaction.message.staticAccountKeys;
      expect(keys[self.programIdIndex].equals(PROBE_ID)).toBe(true);
      expect(keys[self.accounts[0]].equals(eventAuthority)).toBe(true);
      expect(Buffer.from(bs58.decode(self.data)).toString('hex')).toBe('e445a52e51cb9a1d0102030405060708aa');
    });

    test('when a later instruction fails, nothing changes but the fee', async () => {
      const payer = await t.funded(2);
      const receiver = Keypair.generate().publicKey;
      const build = () =>
        new Transaction().add(
          SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: receiver, lamports: 1_000_000 }),
          probeIx(1, counterKeys(payer.publicKey)),
          probeIx(2),
        );
      const preflight = await expectSendError(sendAndConfirmTransaction(t.connection, build(), [payer]));
      expect(preflight.message).toContain('Error processing Instruction 2: custom program error: 0x1770');
      expect(preflight.logs).toContain('Program log: AnchorError occurred. Error Code: Refused. Error Number: 6000. Error Message: refused on purpose.');
      const before = (await t.connection.getAccountInfo(COUNTER))!.data.readBigUInt64LE(0);
      const signature = await sendAndConfirmTransaction(t.connection, build(), [payer], { skipPreflight: true }).catch((e: Error) => e);
      expect(String(signature)).toContain('{"err":{"InstructionError":[2,{"Custom":6000}]}}');
      expect((await t.connection.getAccountInfo(COUNTER))!.data.readBigUInt64LE(0)).toBe(before);
      expect(await t.connection.getBalance(receiver)).toBe(0);
      expect(await t.connection.getBalance(payer.publicKey)).toBe(2 * LAMPORTS_PER_SOL - 5000);
    });

    test('a rent failure inside a CPI is the outer transaction\'s InsufficientFundsForRent, naming the outer account', async () => {
      const payer = await t.funded(1);
      const dust = Keypair.generate().publicKey;
      const message = new TransactionMessage({
        payerKey: payer.publicKey,
        recentBlockhash: (await t.connection.getLatestBlockhash()).blockhash,
        instructions: [
          probeIx(5, [
            { pubkey: payer.publicKey, isSigner: true, isWritable: true },
            { pubkey: dust, isSigner: false, isWritable: true },
            { pubkey: SystemProgram.programId, isSigner: false, isWritable: false },
          ]),
        ],
      }).compileToLegacyMessage();
      const simulated = await t.connection.simulateTransaction(new VersionedTransaction(message));
      expect(simulated.value.err).toEqual({ InsufficientFundsForRent: { account_index: message.accountKeys.findIndex((k) => k.equals(dust)) } });
      expect(await t.connection.getBalance(dust)).toBe(0);
    });

    test('a PDA signs for its own token account; a user signature cannot be forged', async () => {
      const payer = await t.funded(2);
      const mint = await createMint(t.connection, payer, payer.publicKey, null, 0);
      const vault = await createAssociatedTokenAccountIdempotent(t.connection, payer, mint, AUTHORITY, {}, TOKEN_PROGRAM_ID, undefined, true);
      await mintTo(t.connection, payer, mint, vault, payer, 100n);
      const destination = await createAssociatedTokenAccountIdempotent(t.connection, payer, mint, payer.publicKey);
      const amount = Buffer.alloc(8);
      amount.writeBigUInt64LE(30n);
      await sendAndConfirmTransaction(
        t.connection,
        new Transaction().add(
          probeIx(
            3,
            [
              { pubkey: vault, isSigner: false, isWritable: true },
              { pubkey: destination, isSigner: false, isWritable: true },
              { pubkey: AUTHORITY, isSigner: false, isWritable: false },
              { pubkey: TOKEN_PROGRAM_ID, isSigner: false, isWritable: false },
            ],
            amount,
          ),
        ),
        [payer],
      );
      expect((await getAccount(t.connection, destination)).amount).toBe(30n);
      expect(getAssociatedTokenAddressSync(mint, AUTHORITY, true).equals(vault)).toBe(true);

      const victim = await t.funded(1);
      const forged = await expectSendError(
        sendAndConfirmTransaction(
          t.connection,
          new Transaction().add(
            probeIx(4, [
              { pubkey: victim.publicKey, isSigner: false, isWritable: true },
              { pubkey: payer.publicKey, isSigner: false, isWritable: true },
              { pubkey: SystemProgram.programId, isSigner: false, isWritable: false },
            ]),
          ),
          [payer],
        ),
      );
      expect(forged.message).toContain('Cross-program invocation with unauthorized signer or writable account');
      expect(await t.connection.getBalance(victim.publicKey)).toBe(LAMPORTS_PER_SOL);
    });
  });
});

describe('blockhash expiry and signatures', () => {
  let clock = Date.now();
  let t: LocalnetClient;
  beforeAll(async () => {
    t = await localnet({ now: () => clock });
  });
  afterAll(() => t.close());

  test('stale blockhashes and missing signatures are refused, as mainnet refuses them', async () => {
    const a = await t.funded(1);
    const b = Keypair.generate();
    const old = await t.connection.getLatestBlockhash();
    expect((await t.connection.isBlockhashValid(old.blockhash)).value).toBe(true);
    // 152 slots: past the 150-block window. (web3.js caches blockhashes by wall time, hence a chain of its own.)
    clock += 61_000;
    expect((await t.connection.isBlockhashValid(old.blockhash)).value).toBe(false);
    expect(await t.connection.getBlockHeight()).toBeGreaterThan(old.lastValidBlockHeight);
    const stale = new Transaction({ recentBlockhash: old.blockhash, feePayer: a.publicKey }).add(
      SystemProgram.transfer({ fromPubkey: a.publicKey, toPubkey: b.publicKey, lamports: 1000 }),
    );
    stale.sign(a);
    const error = await expectSendError(t.connection.sendRawTransaction(stale.serialize()));
    expect(error.message).toContain('Blockhash not found');

    const latest = await t.connection.getLatestBlockhash();
    const twoSigners = new Transaction({ recentBlockhash: latest.blockhash, feePayer: a.publicKey }).add(
      SystemProgram.transfer({ fromPubkey: b.publicKey, toPubkey: a.publicKey, lamports: 1000 }),
    );
    twoSigners.partialSign(a);
    const unsigned = twoSigners.serialize({ requireAllSignatures: false });
    const refused = await rpc(t.net.rpcUrl, 'sendTransaction', [unsigned.toString('base64'), { encoding: 'base64' }]);
    expect(refused.error).toEqual({ code: -32003, message: 'Transaction signature verification failure' });
    expect(await t.connection.getBalance(a.publicKey)).toBe(LAMPORTS_PER_SOL);
  });

});
