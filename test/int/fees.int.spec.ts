import BN from 'bn.js';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction, TransactionInstruction, TransactionMessage, VersionedTransaction, sendAndConfirmTransaction, type Connection } from '@solana/web3.js';
import { NATIVE_MINT, TOKEN_2022_PROGRAM_ID } from '@solana/spl-token';
import { OnlinePumpSdk, PUMP_SDK, creatorVaultPda, feeSharingConfigPda, getBuyTokenAmountFromSolAmount } from '@pump-fun/pump-sdk';
import { PACKET_DATA_SIZE, distributeInstructions, packInstructionGroups, readCreatorFees } from '@svc/chain';
import { emulatedPrograms } from '../../apps/localnet/src/programs';
import { localnet, type LocalnetClient } from '../support/localnet';

/**
 * The fee reading and the claim's packing in libs/chain against the bundled chain: every vault of many coins in
 * one batched getMultipleAccounts per 100 keys, figures equal to the vaults read one by one, and six sweeps
 * packed into transactions that fit and land.
 */
describe('creator fees: one batched read of every vault, and sweeps packed to fit', () => {
  let t: LocalnetClient;
  let sdk: OnlinePumpSdk;
  let creator: Keypair;
  let partner: Keypair;
  let trader: Keypair;
  const shared: PublicKey[] = [];
  const solo: PublicKey[] = [];

  const send = (instructions: TransactionInstruction[], signers: Keypair[]) =>
    sendAndConfirmTransaction(t.connection, new Transaction().add(...instructions), signers, { commitment: 'confirmed' });
  const lamports = (key: PublicKey) => t.connection.getBalance(key, 'confirmed').then(BigInt);

  async function coin(share: boolean): Promise<PublicKey> {
    const mint = Keypair.generate();
    const owner = creator.publicKey;
    await send([await PUMP_SDK.createV2Instruction({ mint: mint.publicKey, name: 'Fee', symbol: 'FEE', uri: 'https://example.com/fee.json', creator: owner, user: owner, mayhemMode: false })], [creator, mint]);
    if (share) {
      await send(
        [
          await PUMP_SDK.createFeeSharingConfig({ creator: creator.publicKey, mint: mint.publicKey, pool: null }),
          await PUMP_SDK.updateFeeShares({
            authority: creator.publicKey,
            mint: mint.publicKey,
            currentShareholders: [creator.publicKey],
            newShareholders: [
              { address: creator.publicKey, shareBps: 9_000 },
              { address: partner.publicKey, shareBps: 1_000 },
            ],
          }),
        ],
        [creator],
      );
    }
    return mint.publicKey;
  }
  async function buy(mint: PublicKey, sol: number): Promise<void> {
    const [global, feeConfig, state] = await Promise.all([sdk.fetchGlobal(), sdk.fetchFeeConfig(), sdk.fetchBuyState(mint, trader.publicKey, TOKEN_2022_PROGRAM_ID)]);
    const solAmount = new BN(sol * LAMPORTS_PER_SOL);
    const mintSupply = new BN((await t.connection.getTokenSupply(mint)).value.amount);
    const amount = getBuyTokenAmountFromSolAmount({ global, feeConfig, mintSupply, bondingCurve: state.bondingCurve, amount: solAmount, quoteMint: NATIVE_MINT });
    await send(await PUMP_SDK.buyInstructions({ global, ...state, mint, user: trader.publicKey, amount, solAmount, slippage: 0, tokenProgram: TOKEN_2022_PROGRAM_ID }), [trader]);
  }
  /** The connection, counting the RPC methods called through it. */
  function counting(connection: Connection): { connection: Connection; calls: string[] } {
    const calls: string[] = [];
    const proxy = new Proxy(connection, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push(String(property));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return { connection: proxy, calls };
  }

  beforeAll(async () => {
    t = await localnet({ programs: emulatedPrograms() });
    sdk = new OnlinePumpSdk(t.connection);
    [creator, partner, trader] = await Promise.all([t.funded(20), t.funded(1), t.funded(100)]);
    for (let i = 0; i < 24; i++) shared.push(await coin(true));
    for (let i = 0; i < 2; i++) solo.push(await coin(false));
    for (const [i, mint] of [...shared, ...solo].entries()) await buy(mint, 0.05 * (i + 1));
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  test('26 coins’ vaults (107 keys) come in two getMultipleAccounts calls, and agree with the vaults read one by one', async () => {
    const rent = BigInt(await t.connection.getMinimumBalanceForRentExemption(0));
    const counted = counting(t.connection);
    await readCreatorFees(counted.connection, creator.publicKey, [...shared, ...solo]);
    // The rent constants are asked once per connection.
    expect([...counted.calls].sort()).toEqual(['getMinimumBalanceForRentExemption', 'getMinimumBalanceForRentExemption', 'getMultipleAccountsInfoAndContext', 'getMultipleAccountsInfoAndContext']);

    counted.calls.length = 0;
    const fees = await readCreatorFees(counted.connection, creator.publicKey, [...shared, ...solo]);
    expect(counted.calls).toEqual(['getMultipleAccountsInfoAndContext', 'getMultipleAccountsInfoAndContext']);
    expect(fees.coins.map((c) => c.paidTo)).toEqual([...shared.map(() => 'sharing'), ...solo.map(() => 'creator')]);
    for (const [i, mint] of shared.entries()) {
      const vault = (await lamports(creatorVaultPda(feeSharingConfigPda(mint)))) - rent;
      expect(fees.coins[i]).toMatchObject({ shareBps: 9_000, curveVault: vault, poolVault: 0n, pending: vault, claimable: (vault * 9_000n) / 10_000n });
    }
    const own = (await lamports(creatorVaultPda(creator.publicKey))) - rent;
    expect(own).toBeGreaterThan(0n);
    expect(fees.own).toMatchObject({ curveVault: own, poolVault: 0n, claimable: own });
  });

  test('six distributions of coins on their curves pack into one transaction of at most 1,232 bytes, which lands', async () => {
    const six = shared.slice(-6);
    const groups = await Promise.all(six.map(async (mint) => ({ mint, instructions: await distributeInstructions(t.connection, mint) })));
    const packed = packInstructionGroups(creator.publicKey, groups);
    expect(packed.map((part) => part.length)).toEqual([6]);
    const fees = await readCreatorFees(t.connection, creator.publicKey, six);
    const before = { creator: await lamports(creator.publicKey), partner: await lamports(partner.publicKey) };
    const { blockhash, lastValidBlockHeight } = await t.connection.getLatestBlockhash('confirmed');
    const message = new TransactionMessage({ payerKey: creator.publicKey, recentBlockhash: blockhash, instructions: packed[0]!.flatMap((g) => g.instructions) });
    const tx = new VersionedTransaction(message.compileToV0Message());
    tx.sign([creator]);
    expect(tx.serialize().length).toBeLessThanOrEqual(PACKET_DATA_SIZE);
    const signature = await t.connection.sendTransaction(tx);
    await t.connection.confirmTransaction({ signature, blockhash, lastValidBlockHeight }, 'confirmed');
    const paid = fees.coins.reduce((sum, c) => sum + c.claimable, 0n);
    expect((await lamports(creator.publicKey)) - before.creator).toBe(paid - 5_000n);
    expect((await lamports(partner.publicKey)) - before.partner).toBe(fees.coins.reduce((sum, c) => sum + (c.pending * 1_000n) / 10_000n, 0n));
  });
});
