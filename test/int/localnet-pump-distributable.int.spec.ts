import { Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction, TransactionInstruction, TransactionMessage, VersionedTransaction, sendAndConfirmTransaction } from '@solana/web3.js';
import { NATIVE_MINT, TOKEN_2022_PROGRAM_ID } from '@solana/spl-token';
import BN from 'bn.js';
import { OnlinePumpSdk, PUMP_PROGRAM_ID, PUMP_SDK, canonicalPumpPoolPda, creatorVaultPda, feeSharingConfigPda, getBuySolAmountFromTokenAmount, getBuyTokenAmountFromSolAmount } from '@pump-fun/pump-sdk';
import { OnlinePumpAmmSdk, PUMP_AMM_SDK, coinCreatorVaultAtaPda, coinCreatorVaultAuthorityPda } from '@pump-fun/pump-swap-sdk';
import { emulatedPrograms } from '../../apps/localnet/src/programs';
import { eventDiscriminator } from '../../apps/localnet/src/programs/pump/codec';
import { localnet, type LocalnetClient } from '../support/localnet';

/**
 * pump's `get_minimum_distributable_fee` view, asked the way the SDK asks it: `OnlinePumpSdk.getMinimumDistributableFee`
 * simulates the instruction over JSON-RPC (after PumpSwap's fee consolidation once the coin has graduated) and decodes
 * the simulation's return data. A fee-shared coin here has a funded partner (60%) and a newcomer whose address holds
 * nothing yet (40%): the newcomer's share must reach rent exemption, which sets the minimum.
 */

const BPS = 10_000n;
const big = (n: BN | bigint | number) => BigInt(n.toString());

describe('get_minimum_distributable_fee and the SDK\'s distribution over the localnet', () => {
  let t: LocalnetClient;
  let sdk: OnlinePumpSdk;
  let amm: OnlinePumpAmmSdk;
  let creator: Keypair;
  let trader: Keypair;
  let partner: PublicKey;
  const newcomer = Keypair.generate().publicKey;
  const coin = Keypair.generate();
  const mint = coin.publicKey;
  const sharingConfig = feeSharingConfigPda(mint);
  const vault = creatorVaultPda(sharingConfig);
  let rent: bigint;

  const send = (instructions: TransactionInstruction[], signers: Keypair[]) =>
    sendAndConfirmTransaction(t.connection, new Transaction().add(...instructions), signers, { commitment: 'confirmed' });
  const lamports = (key: PublicKey) => t.connection.getBalance(key, 'confirmed').then(BigInt);
  const pending = async () => big(await sdk.getCreatorVaultBalance(sharingConfig));
  const distributed = async (signature: string) => {
    const tx = await t.connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    return (tx?.meta?.logMessages ?? [])
      .filter((line) => line.startsWith('Program data: '))
      .map((line) => Buffer.from(line.slice('Program data: '.length), 'base64'))
      .filter((data) => data.subarray(0, 8).equals(eventDiscriminator('DistributeCreatorFeesEvent')))
      .map((data) => big(PUMP_SDK.decodeDistributeCreatorFeesEvent(data.subarray(8)).distributed));
  };
  async function buyOnCurve(user: Keypair, sol: number): Promise<void> {
    const [global, feeConfig, state] = await Promise.all([sdk.fetchGlobal(), sdk.fetchFeeConfig(), sdk.fetchBuyState(mint, user.publicKey, TOKEN_2022_PROGRAM_ID)]);
    const solAmount = new BN(sol * LAMPORTS_PER_SOL);
    const mintSupply = new BN((await t.connection.getTokenSupply(mint)).value.amount);
    const amount = getBuyTokenAmountFromSolAmount({ global, feeConfig, mintSupply, bondingCurve: state.bondingCurve, amount: solAmount, quoteMint: NATIVE_MINT });
    await send(await PUMP_SDK.buyInstructions({ global, ...state, mint, user: user.publicKey, amount, solAmount, slippage: 0, tokenProgram: TOKEN_2022_PROGRAM_ID }), [user]);
  }

  beforeAll(async () => {
    t = await localnet({ programs: emulatedPrograms() });
    sdk = new OnlinePumpSdk(t.connection);
    amm = new OnlinePumpAmmSdk(t.connection);
    [creator, trader, partner] = await Promise.all([t.funded(10), t.funded(400), t.funded(1).then((k) => k.publicKey)]);
    rent = BigInt(await t.connection.getMinimumBalanceForRentExemption(0));
    await send([await PUMP_SDK.createV2Instruction({ mint, name: 'Split', symbol: 'SPLIT', uri: 'https://example.com/split.json', creator: creator.publicKey, user: creator.publicKey, mayhemMode: false })], [creator, coin]);
    await send([await PUMP_SDK.createFeeSharingConfig({ creator: creator.publicKey, mint, pool: null })], [creator]);
    await send(
      [
        await PUMP_SDK.updateFeeShares({
          authority: creator.publicKey,
          mint,
          currentShareholders: [creator.publicKey],
          newShareholders: [
            { address: partner, shareBps: 6_000 },
            { address: newcomer, shareBps: 4_000 },
          ],
        }),
      ],
      [creator],
    );
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  test('an empty vault cannot distribute: the minimum is what lifts the newcomer\'s 40% to rent exemption', async () => {
    expect(await pending()).toBe(0n);

    const result = await sdk.getMinimumDistributableFee(mint);

    expect(big(result.minimumRequired)).toBe((rent * BPS + 4_000n - 1n) / 4_000n);
    expect(big(result.distributableFees)).toBe(0n);
    expect(result.canDistribute).toBe(false);
    expect(result.isGraduated).toBe(false);
  });

  test('simulateTransaction carries the answer as pump\'s return data, and the same event in the logs', async () => {
    const config = PUMP_SDK.decodeSharingConfig((await t.connection.getAccountInfo(sharingConfig))!);
    const ix = await PUMP_SDK.getMinimumDistributableFee({ mint, sharingConfig: config, sharingConfigAddress: sharingConfig });
    const { blockhash } = await t.connection.getLatestBlockhash();
    const tx = new VersionedTransaction(new TransactionMessage({ payerKey: creator.publicKey, recentBlockhash: blockhash, instructions: [ix] }).compileToV0Message());

    const { value } = await t.connection.simulateTransaction(tx);

    expect(value.err).toBeNull();
    expect(value.returnData?.programId).toBe(PUMP_PROGRAM_ID.toBase58());
    const [data, encoding] = value.returnData!.data;
    expect(encoding).toBe('base64');
    const answer = PUMP_SDK.decodeMinimumDistributableFee(Buffer.from(data, 'base64'));
    expect(big(answer.minimumRequired)).toBe((rent * BPS + 4_000n - 1n) / 4_000n);
    expect(value.logs).toContain(`Program return: ${PUMP_PROGRAM_ID.toBase58()} ${data}`);
    const logged = value.logs!.filter((l) => l.startsWith('Program data: ')).map((l) => Buffer.from(l.slice('Program data: '.length), 'base64'));
    expect(logged.map((d) => d.subarray(0, 8).toString('hex'))).toEqual([eventDiscriminator('MinimumDistributableFeeEvent').toString('hex')]);
    expect(logged[0]!.subarray(8)).toEqual(Buffer.from(data, 'base64'));
  });

  test('below the minimum it cannot, and the distribution it warns of is indeed refused (6070)', async () => {
    await buyOnCurve(trader, 0.5);
    const accrued = await pending();
    const result = await sdk.getMinimumDistributableFee(mint);
    expect(big(result.distributableFees)).toBe(accrued);
    expect(accrued).toBeGreaterThan(0n);
    expect(accrued).toBeLessThan(big(result.minimumRequired));
    expect(result.canDistribute).toBe(false);

    const { instructions } = await sdk.buildDistributeCreatorFeesInstructions(mint);
    const refused = await send(instructions, [creator]).then(
      () => null,
      (error: { logs?: string[] }) => error.logs?.join('\n') ?? String(error),
    );
    expect(refused).toContain('custom program error: 0x17b6');
    expect(await pending()).toBe(accrued);
  });

  test('with fees above the minimum it can; the SDK\'s distribution pays both shares and the newcomer becomes rent-exempt', async () => {
    await buyOnCurve(trader, 2);
    const accrued = await pending();
    const result = await sdk.getMinimumDistributableFee(mint);
    expect(big(result.distributableFees)).toBe(accrued);
    expect(accrued).toBeGreaterThanOrEqual(big(result.minimumRequired));
    expect(result.canDistribute).toBe(true);

    const { instructions, isGraduated } = await sdk.buildDistributeCreatorFeesInstructions(mint);
    expect(isGraduated).toBe(false);
    const before = await lamports(partner);
    const signature = await send(instructions, [creator]);

    expect(await distributed(signature)).toEqual([(accrued * 6_000n) / BPS + (accrued * 4_000n) / BPS]);
    expect((await lamports(partner)) - before).toBe((accrued * 6_000n) / BPS);
    expect(await lamports(newcomer)).toBe((accrued * 4_000n) / BPS);
    expect(await lamports(newcomer)).toBeGreaterThanOrEqual(rent);

    // Both shareholders can now hold any share: a single lamport is enough, and only the rounding dust is left.
    const after = await sdk.getMinimumDistributableFee(mint);
    expect(big(after.minimumRequired)).toBe(1n);
    expect(big(after.distributableFees)).toBe((await lamports(vault)) - rent);
    expect(after.canDistribute).toBe(big(after.distributableFees) >= 1n);
  });

  test('once graduated, the simulation first sweeps the pool\'s creator vault, and the distribution pays both vaults', async () => {
    const [global, feeConfig, state] = await Promise.all([sdk.fetchGlobal(), sdk.fetchFeeConfig(), sdk.fetchBuyState(mint, trader.publicKey, TOKEN_2022_PROGRAM_ID)]);
    const rest = state.bondingCurve.realTokenReserves;
    const mintSupply = new BN((await t.connection.getTokenSupply(mint)).value.amount);
    const cost = getBuySolAmountFromTokenAmount({ global, feeConfig, mintSupply, bondingCurve: state.bondingCurve, amount: rest, quoteMint: NATIVE_MINT });
    await send(await PUMP_SDK.buyInstructions({ global, ...state, mint, user: trader.publicKey, amount: rest, solAmount: cost, slippage: 0, tokenProgram: TOKEN_2022_PROGRAM_ID }), [trader]);
    await t.net.keeper!.whenMigrated(mint);
    const pool = canonicalPumpPoolPda(mint);
    await send(await PUMP_AMM_SDK.buyQuoteInput(await amm.swapSolanaState(pool, trader.publicKey), new BN(LAMPORTS_PER_SOL), 1), [trader]);
    const poolVault = coinCreatorVaultAtaPda(coinCreatorVaultAuthorityPda(sharingConfig), NATIVE_MINT, new PublicKey('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'));
    const inPool = BigInt((await t.connection.getTokenAccountBalance(poolVault)).value.amount);
    expect(inPool).toBeGreaterThan(0n);
    const onCurve = await pending();

    const result = await sdk.getMinimumDistributableFee(mint);

    expect(result.isGraduated).toBe(true);
    expect(big(result.distributableFees)).toBe(onCurve + inPool);
    expect(result.canDistribute).toBe(true);
    // A view: nothing moved.
    expect(await pending()).toBe(onCurve);
    expect(BigInt((await t.connection.getTokenAccountBalance(poolVault)).value.amount)).toBe(inPool);

    const { instructions, isGraduated } = await sdk.buildDistributeCreatorFeesInstructions(mint);
    expect(isGraduated).toBe(true);
    expect(instructions).toHaveLength(2);
    const before = { partner: await lamports(partner), newcomer: await lamports(newcomer) };
    const signature = await send(instructions, [creator]);
    const total = big(result.distributableFees);
    expect(await distributed(signature)).toEqual([(total * 6_000n) / BPS + (total * 4_000n) / BPS]);
    expect((await lamports(partner)) - before.partner).toBe((total * 6_000n) / BPS);
    expect((await lamports(newcomer)) - before.newcomer).toBe((total * 4_000n) / BPS);
    expect(BigInt((await t.connection.getTokenAccountBalance(poolVault)).value.amount)).toBe(0n);
  }, 60_000);
});
