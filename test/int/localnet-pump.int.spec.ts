import { Keypair, LAMPORTS_PER_SOL, PublicKey, SendTransactionError, Transaction, TransactionInstruction, sendAndConfirmTransaction } from '@solana/web3.js';
import { getAccount, getAssociatedTokenAddressSync, getMint, getTokenMetadata, NATIVE_MINT, TOKEN_2022_PROGRAM_ID } from '@solana/spl-token';
import BN from 'bn.js';
import {
  bondingCurvePda,
  bondingCurveV2Pda,
  canonicalPumpPoolPda,
  creatorVaultPda,
  getBuySolAmountFromTokenAmount,
  getBuyTokenAmountFromSolAmount,
  getPumpProgram,
  getSellSolAmountFromTokenAmount,
  GLOBAL_PDA,
  OnlinePumpSdk,
  PUMP_FEE_CONFIG_PDA,
  PUMP_SDK,
  feeSharingConfigPda,
  userVolumeAccumulatorPda,
} from '@pump-fun/pump-sdk';
import { pumpProgram } from '../../apps/localnet/src/programs/pump';
import { pumpSwapProgram } from '../../apps/localnet/src/programs/pumpSwap';
import { pumpFeesProgram } from '../../apps/localnet/src/programs/pumpFees';
import { eventDiscriminator } from '../../apps/localnet/src/programs/pump/codec';
import { GENESIS_GLOBAL } from '../../apps/localnet/src/programs/pump/genesis';
import { buyExactSolInTokens, curveFeeRates, feeSupply } from '../../apps/localnet/src/programs/pump/math';
import { decodeBondingCurve, decodeFeeConfig, decodeGlobal } from '../../apps/localnet/src/programs/pump/state';
import { localnet, type LocalnetClient } from '../support/localnet';

/**
 * The unmodified pump SDK against the localnet over JSON-RPC: a coin's whole bonding-curve life, from
 * create_v2 through trades, fees and slippage refusals to a complete curve migrated into PumpSwap.
 */

const BUYBACK_RECIPIENT = GENESIS_GLOBAL.buybackFeeRecipients[0];

describe('pump bonding curve on the localnet, driven by @pump-fun/pump-sdk', () => {
  let t: LocalnetClient;
  let sdk: OnlinePumpSdk;
  let creator: Keypair;
  let trader: Keypair;
  let whale: Keypair;
  const mintKeypair = Keypair.generate();
  const mint = mintKeypair.publicKey;

  beforeAll(async () => {
    // The test sends migrate itself; localnet-graduation.int.spec.ts covers the keeper's.
    t = await localnet({ programs: [pumpProgram, pumpSwapProgram, pumpFeesProgram], graduationKeeper: false });
    sdk = new OnlinePumpSdk(t.connection);
    [creator, trader, whale] = await Promise.all([t.funded(10), t.funded(50), t.funded(200)]);
  });
  afterAll(async () => {
    await t?.close();
  });

  const send = (instructions: TransactionInstruction[], signers: Keypair[]) =>
    sendAndConfirmTransaction(t.connection, new Transaction().add(...instructions), signers, { commitment: 'confirmed' });
  const lamports = (key: PublicKey) => t.connection.getBalance(key, 'confirmed').then(BigInt);
  const tokens = (owner: PublicKey) =>
    getAccount(t.connection, getAssociatedTokenAddressSync(mint, owner, true, TOKEN_2022_PROGRAM_ID), 'confirmed', TOKEN_2022_PROGRAM_ID).then((a) => a.amount);
  const curve = async () => decodeBondingCurve((await t.connection.getAccountInfo(bondingCurvePda(mint), 'confirmed'))!.data);
  /** Bodies of the `Program data:` events named `name` that a landed transaction logged. */
  const events = async (signature: string, name: string) => {
    const tx = await t.connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    return (tx?.meta?.logMessages ?? [])
      .filter((line) => line.startsWith('Program data: '))
      .map((line) => Buffer.from(line.slice('Program data: '.length), 'base64'))
      .filter((data) => data.subarray(0, 8).equals(eventDiscriminator(name)))
      .map((data) => data.subarray(8));
  };
  const tradeEvents = async (signature: string) => (await events(signature, 'TradeEvent')).map((body) => PUMP_SDK.decodeTradeEventBc(body));
  const market = async () => {
    const [global, feeConfig, bondingCurve, mintAccount] = await Promise.all([sdk.fetchGlobal(), sdk.fetchFeeConfig(), sdk.fetchBondingCurve(mint), getMint(t.connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID)]);
    return { global, feeConfig, bondingCurve, mintSupply: new BN(mintAccount.supply.toString()) };
  };
  async function expectRefused(instructions: TransactionInstruction[], signers: Keypair[], code: number): Promise<void> {
    const error = await send(instructions, signers).then(
      () => new Error('expected the transaction to be refused'),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SendTransactionError);
    expect((error as SendTransactionError).logs?.join('\n')).toContain(`custom program error: 0x${code.toString(16)}`);
  }

  test('create_v2 makes a Token-2022 coin with metadata, its whole supply on the curve at the genesis reserves', async () => {
    const ix = await PUMP_SDK.createV2Instruction({ mint, name: 'Localnet Frog', symbol: 'LFROG', uri: 'https://example.com/frog.json', creator: creator.publicKey, user: creator.publicKey, mayhemMode: false });
    await send([ix], [creator, mintKeypair]);

    const bondingCurve = await sdk.fetchBondingCurve(mint);
    expect(bondingCurve.virtualTokenReserves.toString()).toBe('1073000000000000');
    expect(bondingCurve.virtualQuoteReserves.toString()).toBe('30000000000');
    expect(bondingCurve.realTokenReserves.toString()).toBe('793100000000000');
    expect(bondingCurve.creator.equals(creator.publicKey)).toBe(true);
    expect(bondingCurve.complete).toBe(false);
    const mintAccount = await getMint(t.connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID);
    expect(mintAccount.supply).toBe(1_000_000_000_000_000n);
    expect(mintAccount.decimals).toBe(6);
    expect(mintAccount.mintAuthority).toBeNull();
    expect(await tokens(bondingCurvePda(mint))).toBe(1_000_000_000_000_000n);
    const metadata = await getTokenMetadata(t.connection, mint, 'confirmed');
    expect({ name: metadata?.name, symbol: metadata?.symbol, uri: metadata?.uri }).toEqual({ name: 'Localnet Frog', symbol: 'LFROG', uri: 'https://example.com/frog.json' });
  });

  test('buy: the SDK quote for 1 SOL is delivered to the token unit and the fees land where the TradeEvent says', async () => {
    const { global, feeConfig, bondingCurve, mintSupply } = await market();
    const solAmount = new BN(LAMPORTS_PER_SOL);
    const amount = getBuyTokenAmountFromSolAmount({ global, feeConfig, mintSupply, bondingCurve, amount: solAmount, quoteMint: NATIVE_MINT });
    const cost = getBuySolAmountFromTokenAmount({ global, feeConfig, mintSupply, bondingCurve, amount, quoteMint: NATIVE_MINT });
    const state = await sdk.fetchBuyState(mint, trader.publicKey, TOKEN_2022_PROGRAM_ID);
    const instructions = await PUMP_SDK.buyInstructions({ global, ...state, mint, user: trader.publicKey, amount, solAmount: cost, slippage: 1, tokenProgram: TOKEN_2022_PROGRAM_ID });
    const buyIx = instructions[instructions.length - 1];
    const feeRecipient = buyIx.keys[1].pubkey;
    const vault = creatorVaultPda(creator.publicKey);
    const before = { trader: await lamports(trader.publicKey), recipient: await lamports(feeRecipient) };

    const signature = await send(instructions, [trader]);

    const [event] = await tradeEvents(signature);
    expect(await tokens(trader.publicKey)).toBe(BigInt(amount.toString()));
    expect(event.tokenAmount.toString()).toBe(amount.toString());
    expect(event.solAmount.add(event.fee).add(event.creatorFee).toString()).toBe(cost.toString());
    expect(event.feeBasisPoints.toNumber()).toBe(95);
    expect(event.creatorFeeBasisPoints.toNumber()).toBe(30);
    expect((await lamports(feeRecipient)) - before.recipient).toBe(BigInt(event.fee.toString()));
    const rent = {
      vault: BigInt(await t.connection.getMinimumBalanceForRentExemption(0)),
      ata: BigInt(await t.connection.getMinimumBalanceForRentExemption(170)),
      volume: BigInt(await t.connection.getMinimumBalanceForRentExemption(137)),
    };
    expect(await lamports(vault)).toBe(rent.vault + BigInt(event.creatorFee.toString()));
    expect(before.trader - (await lamports(trader.publicKey))).toBe(BigInt(cost.toString()) + 5000n + rent.ata + rent.volume + rent.vault);
    const after = await curve();
    expect(after.realTokenReserves).toBe(793_100_000_000_000n - BigInt(amount.toString()));
    expect(after.realQuoteReserves).toBe(BigInt(event.solAmount.toString()));
    expect(await t.connection.getAccountInfo(userVolumeAccumulatorPda(trader.publicKey))).not.toBeNull();
  });

  test('sell: half the tokens come back as the SDK quoted, fees out of the proceeds', async () => {
    const { global, feeConfig, bondingCurve, mintSupply } = await market();
    const half = new BN(((await tokens(trader.publicKey)) / 2n).toString());
    const expected = getSellSolAmountFromTokenAmount({ global, feeConfig, mintSupply, bondingCurve, amount: half });
    const state = await sdk.fetchSellState(mint, trader.publicKey, TOKEN_2022_PROGRAM_ID);
    const instructions = await PUMP_SDK.sellInstructions({ global, ...state, mint, user: trader.publicKey, amount: half, solAmount: expected, slippage: 1, tokenProgram: TOKEN_2022_PROGRAM_ID, mayhemMode: false });
    const before = await lamports(trader.publicKey);

    await send(instructions, [trader]);

    expect((await lamports(trader.publicKey)) - before).toBe(BigInt(expected.toString()) - 5000n);
  });

  test('slippage: a buy whose max_sol_cost is a lamport short fails with TooMuchSolRequired and changes nothing but the fee', async () => {
    const { global, feeConfig, bondingCurve, mintSupply } = await market();
    const amount = new BN(1_000_000_000_000);
    const cost = getBuySolAmountFromTokenAmount({ global, feeConfig, mintSupply, bondingCurve, amount, quoteMint: NATIVE_MINT });
    const ix = await PUMP_SDK.getBuyInstructionRaw({
      user: trader.publicKey,
      mint,
      creator: creator.publicKey,
      amount,
      solAmount: cost.subn(1),
      feeRecipient: global.feeRecipient,
      buybackFeeRecipient: BUYBACK_RECIPIENT,
      tokenProgram: TOKEN_2022_PROGRAM_ID,
    });
    await expectRefused([ix], [trader], 6002);

    const before = { sol: await lamports(trader.publicKey), tokens: await tokens(trader.publicKey), curve: await curve() };
    const tx = new Transaction().add(ix);
    const signature = await t.connection.sendTransaction(tx, [trader], { skipPreflight: true });
    const confirmation = await t.connection.confirmTransaction({ signature, ...(await t.connection.getLatestBlockhash()) }, 'confirmed');
    expect(confirmation.value.err).toEqual({ InstructionError: [0, { Custom: 6002 }] });
    expect(before.sol - (await lamports(trader.publicKey))).toBe(5000n);
    expect(await tokens(trader.publicKey)).toBe(before.tokens);
    expect(await curve()).toEqual(before.curve);
  });

  test('buy_exact_sol_in (built from the bundled IDL) spends at most the budget for the IDL-documented amount', async () => {
    const { global, feeConfig } = await market();
    const onChain = await curve();
    const spendable = 2n * BigInt(LAMPORTS_PER_SOL);
    const [globalAccount, feeConfigAccount] = await t.connection.getMultipleAccountsInfo([GLOBAL_PDA, PUMP_FEE_CONFIG_PDA]);
    const rates = curveFeeRates(decodeGlobal(globalAccount!.data), decodeFeeConfig(feeConfigAccount!.data), onChain, feeSupply(onChain, onChain.tokenTotalSupply));
    const expected = buyExactSolInTokens(onChain, rates, spendable);
    const quote = getBuyTokenAmountFromSolAmount({ global, feeConfig, mintSupply: new BN('1000000000000000'), bondingCurve: await sdk.fetchBondingCurve(mint), amount: new BN(spendable.toString()), quoteMint: NATIVE_MINT });
    const ix = await getPumpProgram(t.connection)
      .methods.buyExactSolIn(new BN(spendable.toString()), quote.muln(99).divn(100), { 0: true })
      .accountsPartial({
        feeRecipient: global.feeRecipient,
        mint,
        associatedUser: getAssociatedTokenAddressSync(mint, trader.publicKey, true, TOKEN_2022_PROGRAM_ID),
        user: trader.publicKey,
        creatorVault: creatorVaultPda(creator.publicKey),
        tokenProgram: TOKEN_2022_PROGRAM_ID,
      })
      .remainingAccounts([
        { pubkey: bondingCurveV2Pda(mint), isWritable: false, isSigner: false },
        { pubkey: BUYBACK_RECIPIENT, isWritable: true, isSigner: false },
      ])
      .instruction();
    const before = { sol: await lamports(trader.publicKey), tokens: await tokens(trader.publicKey) };

    const signature = await send([ix], [trader]);

    const [event] = await tradeEvents(signature);
    expect((await tokens(trader.publicKey)) - before.tokens).toBe(expected);
    expect(event.ixName).toBe('buy_exact_sol_in');
    const spent = before.sol - (await lamports(trader.publicKey)) - 5000n;
    expect(spent).toBe(BigInt(event.solAmount.add(event.fee).add(event.creatorFee).toString()));
    expect(spent).toBeLessThanOrEqual(spendable);
  });

  test('buying out the curve completes it; trades are then refused with BondingCurveComplete and the creator collects', async () => {
    const { global, feeConfig, bondingCurve, mintSupply } = await market();
    const rest = bondingCurve.realTokenReserves;
    const cost = getBuySolAmountFromTokenAmount({ global, feeConfig, mintSupply, bondingCurve, amount: rest, quoteMint: NATIVE_MINT });
    const state = await sdk.fetchBuyState(mint, whale.publicKey, TOKEN_2022_PROGRAM_ID);
    // Asking for more than is left buys exactly what is left.
    const buyAll = await PUMP_SDK.buyInstructions({ global, ...state, mint, user: whale.publicKey, amount: rest.muln(2), solAmount: cost, slippage: 1, tokenProgram: TOKEN_2022_PROGRAM_ID });
    const signature = await send(buyAll, [whale]);

    expect(await tokens(whale.publicKey)).toBe(BigInt(rest.toString()));
    const complete = await sdk.fetchBondingCurve(mint);
    expect(complete.complete).toBe(true);
    expect(complete.realTokenReserves.isZero()).toBe(true);
    const [completeEvent] = await events(signature, 'CompleteEvent');
    expect(PUMP_SDK.decodeCompleteEventBc(completeEvent).mint.equals(mint)).toBe(true);

    const again = await PUMP_SDK.getBuyInstructionRaw({ user: trader.publicKey, mint, creator: creator.publicKey, amount: new BN(1_000_000), solAmount: new BN(LAMPORTS_PER_SOL), feeRecipient: global.feeRecipient, buybackFeeRecipient: BUYBACK_RECIPIENT, tokenProgram: TOKEN_2022_PROGRAM_ID });
    await expectRefused([again], [trader], 6005);
    const sellState = await sdk.fetchSellState(mint, trader.publicKey, TOKEN_2022_PROGRAM_ID);
    const sellIxs = await PUMP_SDK.sellInstructions({ global, ...sellState, mint, user: trader.publicKey, amount: new BN(1_000_000), solAmount: new BN(0), slippage: 0, tokenProgram: TOKEN_2022_PROGRAM_ID, mayhemMode: false });
    await expectRefused(sellIxs, [trader], 6005);

    const vault = creatorVaultPda(creator.publicKey);
    const accrued = BigInt((await sdk.getCreatorVaultBalance(creator.publicKey)).toString());
    expect(accrued).toBeGreaterThan(0n);
    const [collect] = await sdk.collectCoinCreatorFeeInstructions(creator.publicKey);
    const before = await lamports(creator.publicKey);
    await send([collect], [creator]);
    expect((await lamports(creator.publicKey)) - before).toBe(accrued - 5000n);
    expect(await lamports(vault)).toBe(BigInt(await t.connection.getMinimumBalanceForRentExemption(0)));
  });

  test('migrate moves the complete curve into its canonical PumpSwap pool and burns the LP tokens', async () => {
    const global = await sdk.fetchGlobal();
    const onChain = await curve();
    const ix = await PUMP_SDK.migrateInstruction({ withdrawAuthority: global.withdrawAuthority, mint, user: whale.publicKey, tokenProgram: TOKEN_2022_PROGRAM_ID });
    await send([ix], [whale]);

    const pool = canonicalPumpPoolPda(mint);
    const poolBase = await getAccount(t.connection, getAssociatedTokenAddressSync(mint, pool, true, TOKEN_2022_PROGRAM_ID), 'confirmed', TOKEN_2022_PROGRAM_ID);
    const poolQuote = await getAccount(t.connection, getAssociatedTokenAddressSync(NATIVE_MINT, pool, true), 'confirmed');
    expect(poolBase.amount).toBe(1_000_000_000_000_000n - 793_100_000_000_000n);
    expect(poolQuote.amount).toBe(onChain.realQuoteReserves - BigInt(global.poolMigrationFee.toString()));
    const migrated = await sdk.fetchBondingCurve(mint);
    expect(migrated.virtualTokenReserves.isZero()).toBe(true);
    expect(await tokens(bondingCurvePda(mint))).toBe(0n);
    const lpMint = await getMint(t.connection, ix.keys[15].pubkey, 'confirmed', TOKEN_2022_PROGRAM_ID);
    const burnt = await getAccount(t.connection, ix.keys[16].pubkey, 'confirmed', TOKEN_2022_PROGRAM_ID);
    expect(burnt.amount).toBe(0n);
    expect(lpMint.supply).toBe(0n);
    await expectRefused([ix], [whale], 6081);
  });

  test('fee sharing: pump-fees repoints the curve\'s creator to the SharingConfig and distribute_creator_fees pays its shareholders', async () => {
    const shared = Keypair.generate();
    // A shareholder must be able to hold what it is paid: an empty account below the rent minimum is refused (6070).
    const partner = (await t.funded(1)).publicKey;
    await send([await PUMP_SDK.createV2Instruction({ mint: shared.publicKey, name: 'Shared', symbol: 'SHR', uri: 'https://example.com/s.json', creator: creator.publicKey, user: creator.publicKey, mayhemMode: false })], [creator, shared]);
    await send([await PUMP_SDK.createFeeSharingConfig({ creator: creator.publicKey, mint: shared.publicKey, pool: null })], [creator]);
    const sharingConfig = feeSharingConfigPda(shared.publicKey);
    expect((await sdk.fetchBondingCurve(shared.publicKey)).creator.equals(sharingConfig)).toBe(true);
    const update = await PUMP_SDK.updateFeeShares({
      authority: creator.publicKey,
      mint: shared.publicKey,
      currentShareholders: [creator.publicKey],
      newShareholders: [
        { address: creator.publicKey, shareBps: 7_000 },
        { address: partner, shareBps: 3_000 },
      ],
    });
    await send([update], [creator]);

    const { global } = await market();
    const state = await sdk.fetchBuyState(shared.publicKey, trader.publicKey, TOKEN_2022_PROGRAM_ID);
    const buyIxs = await PUMP_SDK.buyInstructions({ global, ...state, mint: shared.publicKey, user: trader.publicKey, amount: new BN('30000000000000'), solAmount: new BN(2 * LAMPORTS_PER_SOL), slippage: 1, tokenProgram: TOKEN_2022_PROGRAM_ID });
    const [event] = await tradeEvents(await send(buyIxs, [trader]));
    expect(event.creator.equals(sharingConfig)).toBe(true);
    const accrued = BigInt((await sdk.getCreatorVaultBalance(sharingConfig)).toString());
    expect(accrued).toBe(BigInt(event.creatorFee.toString()));

    const { instructions } = await sdk.buildDistributeCreatorFeesInstructions(shared.publicKey);
    const before = { creator: await lamports(creator.publicKey), partner: await lamports(partner) };
    await send(instructions, [creator]);
    expect((await lamports(creator.publicKey)) - before.creator).toBe((accrued * 7_000n) / 10_000n - 5000n);
    expect((await lamports(partner)) - before.partner).toBe((accrued * 3_000n) / 10_000n);
  });
});
