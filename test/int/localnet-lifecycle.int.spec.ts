import { Keypair, LAMPORTS_PER_SOL, PublicKey, SendTransactionError, Transaction, TransactionInstruction, sendAndConfirmTransaction } from '@solana/web3.js';
import { getAccount, getAssociatedTokenAddressSync, getMint, NATIVE_MINT, TOKEN_2022_PROGRAM_ID } from '@solana/spl-token';
import BN from 'bn.js';
import {
  OnlinePumpSdk,
  PUMP_SDK,
  bondingCurvePda,
  canonicalPumpPoolPda,
  creatorVaultPda,
  getBuySolAmountFromTokenAmount,
  getBuyTokenAmountFromSolAmount,
  getPumpProgram,
  getSellSolAmountFromTokenAmount,
  pumpIdl,
  pumpPoolAuthorityPda,
  userVolumeAccumulatorPda,
} from '@pump-fun/pump-sdk';
import {
  OFFLINE_PUMP_AMM_PROGRAM,
  OnlinePumpAmmSdk,
  PUMP_AMM_SDK,
  buyBaseInput,
  buyQuoteInput,
  coinCreatorVaultAtaPda,
  coinCreatorVaultAuthorityPda,
  sellBaseInput,
  userVolumeAccumulatorPda as ammUserVolumeAccumulatorPda,
} from '@pump-fun/pump-swap-sdk';
import { emulatedPrograms } from '../../apps/localnet/src/programs';
import { localnet, type LocalnetClient } from '../support/localnet';
import { swapPricing } from '../support/pumpAmm';

/**
 * One coin's whole life on the localnet, told in order and driven only by real clients over JSON-RPC: web3.js,
 * spl-token, and the unmodified pump and PumpSwap SDKs reading their state from the chain. It is created, traded on
 * its bonding curve, bought out, refused once complete, migrated into its canonical PumpSwap pool, traded there, and
 * finally its creator collects what both programs set aside for it. Every amount is the SDKs' own quote.
 */

/** What one landed transaction cost its fee payer and which anchor events it logged. */
interface Landed {
  fee: bigint;
  events: { name: string; data: Record<string, unknown> }[];
}

const big = (n: BN | bigint | number) => BigInt(n.toString());
const bn = (n: bigint) => new BN(n.toString());

describe('a pump coin from create_v2 to collected creator fees on its graduated PumpSwap pool', () => {
  let t: LocalnetClient;
  let pump: OnlinePumpSdk;
  let amm: OnlinePumpAmmSdk;
  let creator: Keypair;
  let trader: Keypair;
  let whale: Keypair;
  const mintKeypair = Keypair.generate();
  const mint = mintKeypair.publicKey;
  const pool = canonicalPumpPoolPda(mint);
  /** Creator fees charged so far, as the programs reported them in their trade events. */
  const accrued = { curve: 0n, pool: 0n };
  /** The curve as it stood just before migrate, for the pool's opening reserves. */
  let completeCurve: { tokens: bigint; quote: bigint };

  beforeAll(async () => {
    // This coin's migrate is sent by the test itself; localnet-graduation.int.spec.ts covers the keeper's.
    t = await localnet({ programs: emulatedPrograms(), graduationKeeper: false });
    pump = new OnlinePumpSdk(t.connection);
    amm = new OnlinePumpAmmSdk(t.connection);
    [creator, trader, whale] = await Promise.all([t.funded(2), t.funded(20), t.funded(200)]);
  });
  afterAll(async () => {
    await t?.close();
  });

  const pumpCoder = () => getPumpProgram(t.connection).coder;
  const decoders = [(b64: string) => pumpCoder().events.decode(b64), (b64: string) => OFFLINE_PUMP_AMM_PROGRAM.coder.events.decode(b64)];
  async function send(instructions: TransactionInstruction[], signers: Keypair[]): Promise<Landed> {
    const signature = await sendAndConfirmTransaction(t.connection, new Transaction().add(...instructions), signers, { commitment: 'confirmed' });
    const tx = await t.connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    const events = (tx?.meta?.logMessages ?? [])
      .filter((line) => line.startsWith('Program data: '))
      .map((line) => line.slice('Program data: '.length))
      .flatMap((b64) => {
        for (const decode of decoders) {
          const event = decode(b64);
          if (event) return [{ name: event.name, data: event.data as Record<string, unknown> }];
        }
        return [];
      });
    return { fee: BigInt(tx!.meta!.fee), events };
  }
  function event<T>(landed: Landed, name: string): T {
    const found = landed.events.filter((e) => e.name.toLowerCase() === name.toLowerCase());
    expect(found).toHaveLength(1);
    return found[0].data as T;
  }
  const lamports = (key: PublicKey) => t.connection.getBalance(key, 'confirmed').then(BigInt);
  const tokens = async (owner: PublicKey) => {
    const address = getAssociatedTokenAddressSync(mint, owner, true, TOKEN_2022_PROGRAM_ID);
    const info = await t.connection.getAccountInfo(address, 'confirmed');
    return info ? (await getAccount(t.connection, address, 'confirmed', TOKEN_2022_PROGRAM_ID)).amount : 0n;
  };
  /** Rent of those of `keys` that did not exist in `before` and do now: what a payer put into accounts it created. */
  const snapshot = (keys: PublicKey[]) => t.connection.getMultipleAccountsInfo(keys, 'confirmed');
  async function rentOfCreated(keys: PublicKey[], before: Awaited<ReturnType<typeof snapshot>>): Promise<bigint> {
    const after = await snapshot(keys);
    let rent = 0n;
    for (let i = 0; i < keys.length; i++) {
      if (!before[i] && after[i]) rent += BigInt(await t.connection.getMinimumBalanceForRentExemption(after[i]!.data.length));
    }
    return rent;
  }
  const curveMarket = async () => {
    const [global, feeConfig, bondingCurve, mintAccount] = await Promise.all([
      pump.fetchGlobal(),
      pump.fetchFeeConfig(),
      pump.fetchBondingCurve(mint),
      getMint(t.connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID),
    ]);
    return { global, feeConfig, bondingCurve, mintSupply: new BN(mintAccount.supply.toString()) };
  };
  const pricing = swapPricing;

  type TradeEvent = { solAmount: BN; tokenAmount: BN; fee: BN; creatorFee: BN; creator: PublicKey; isBuy: boolean };
  type AmmBuyEvent = { baseAmountOut: BN; userQuoteAmountIn: BN; coinCreatorFee: BN; coinCreator: PublicKey; protocolFeeRecipientTokenAccount: PublicKey };
  type AmmSellEvent = { baseAmountIn: BN; userQuoteAmountOut: BN; coinCreatorFee: BN; coinCreator: PublicKey; protocolFeeRecipientTokenAccount: PublicKey };

  test('create_v2: the whole supply sits on a fresh curve at the reserves Global prescribes', async () => {
    const global = await pump.fetchGlobal();
    const ix = await PUMP_SDK.createV2Instruction({ mint, name: 'Lifecycle Newt', symbol: 'NEWT', uri: 'https://example.com/newt.json', creator: creator.publicKey, user: creator.publicKey, mayhemMode: false });
    await send([ix], [creator, mintKeypair]);

    const curve = await pump.fetchBondingCurve(mint);
    expect(curve.virtualTokenReserves.toString()).toBe(global.initialVirtualTokenReserves.toString());
    expect(curve.virtualQuoteReserves.toString()).toBe(global.initialVirtualSolReserves.toString());
    expect(curve.realTokenReserves.toString()).toBe(global.initialRealTokenReserves.toString());
    expect(curve.realQuoteReserves.isZero()).toBe(true);
    expect(curve.creator.equals(creator.publicKey)).toBe(true);
    expect(curve.complete).toBe(false);
    expect((await getMint(t.connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID)).supply).toBe(big(global.tokenTotalSupply));
    expect(await tokens(bondingCurvePda(mint))).toBe(big(global.tokenTotalSupply));
  });

  test('buy: 1 SOL buys exactly getBuyTokenAmountFromSolAmount and costs exactly getBuySolAmountFromTokenAmount', async () => {
    const { global, feeConfig, bondingCurve, mintSupply } = await curveMarket();
    const amount = getBuyTokenAmountFromSolAmount({ global, feeConfig, mintSupply, bondingCurve, amount: new BN(LAMPORTS_PER_SOL), quoteMint: NATIVE_MINT });
    const cost = getBuySolAmountFromTokenAmount({ global, feeConfig, mintSupply, bondingCurve, amount, quoteMint: NATIVE_MINT });
    const state = await pump.fetchBuyState(mint, trader.publicKey, TOKEN_2022_PROGRAM_ID);
    const instructions = await PUMP_SDK.buyInstructions({ global, ...state, mint, user: trader.publicKey, amount, solAmount: cost, slippage: 0, tokenProgram: TOKEN_2022_PROGRAM_ID });
    // The first buy opens the trader's token account and volume accumulator, and the creator's vault.
    const created = [getAssociatedTokenAddressSync(mint, trader.publicKey, true, TOKEN_2022_PROGRAM_ID), userVolumeAccumulatorPda(trader.publicKey), creatorVaultPda(creator.publicKey)];
    const existed = await snapshot(created);
    const before = await lamports(trader.publicKey);

    const landed = await send(instructions, [trader]);

    const trade = event<TradeEvent>(landed, 'TradeEvent');
    expect(trade.isBuy).toBe(true);
    expect(trade.creator.equals(creator.publicKey)).toBe(true);
    expect(trade.tokenAmount.toString()).toBe(amount.toString());
    expect(trade.solAmount.add(trade.fee).add(trade.creatorFee).toString()).toBe(cost.toString());
    expect(await tokens(trader.publicKey)).toBe(big(amount));
    expect(before - (await lamports(trader.publicKey))).toBe(big(cost) + landed.fee + (await rentOfCreated(created, existed)));
    const after = await pump.fetchBondingCurve(mint);
    expect(after.realTokenReserves.toString()).toBe(bondingCurve.realTokenReserves.sub(amount).toString());
    expect(after.realQuoteReserves.toString()).toBe(bondingCurve.realQuoteReserves.add(trade.solAmount).toString());
    accrued.curve += big(trade.creatorFee);
    expect(big(await pump.getCreatorVaultBalance(creator.publicKey))).toBe(accrued.curve);
  });

  test('sell: half the tokens return exactly getSellSolAmountFromTokenAmount', async () => {
    const { global, feeConfig, bondingCurve, mintSupply } = await curveMarket();
    const held = await tokens(trader.publicKey);
    const half = bn(held / 2n);
    const expected = getSellSolAmountFromTokenAmount({ global, feeConfig, mintSupply, bondingCurve, amount: half });
    const state = await pump.fetchSellState(mint, trader.publicKey, TOKEN_2022_PROGRAM_ID);
    const instructions = await PUMP_SDK.sellInstructions({ global, ...state, mint, user: trader.publicKey, amount: half, solAmount: expected, slippage: 0, tokenProgram: TOKEN_2022_PROGRAM_ID, mayhemMode: false });
    const before = await lamports(trader.publicKey);

    const landed = await send(instructions, [trader]);

    const trade = event<TradeEvent>(landed, 'TradeEvent');
    expect(trade.isBuy).toBe(false);
    expect(trade.tokenAmount.toString()).toBe(half.toString());
    expect(trade.solAmount.sub(trade.fee).sub(trade.creatorFee).toString()).toBe(expected.toString());
    expect((await lamports(trader.publicKey)) - before).toBe(big(expected) - landed.fee);
    expect(await tokens(trader.publicKey)).toBe(held - big(half));
    const after = await pump.fetchBondingCurve(mint);
    expect(after.realTokenReserves.toString()).toBe(bondingCurve.realTokenReserves.add(half).toString());
    expect(after.realQuoteReserves.toString()).toBe(bondingCurve.realQuoteReserves.sub(trade.solAmount).toString());
    accrued.curve += big(trade.creatorFee);
    expect(big(await pump.getCreatorVaultBalance(creator.publicKey))).toBe(accrued.curve);
  });

  test('buy-out: the whale buys every token left at the quoted cost and the curve completes', async () => {
    const { global, feeConfig, bondingCurve, mintSupply } = await curveMarket();
    const rest = bondingCurve.realTokenReserves;
    const cost = getBuySolAmountFromTokenAmount({ global, feeConfig, mintSupply, bondingCurve, amount: rest, quoteMint: NATIVE_MINT });
    // The SDK's inverse quote agrees: spending exactly that cost buys exactly what is left.
    expect(getBuyTokenAmountFromSolAmount({ global, feeConfig, mintSupply, bondingCurve, amount: cost, quoteMint: NATIVE_MINT }).toString()).toBe(rest.toString());
    const state = await pump.fetchBuyState(mint, whale.publicKey, TOKEN_2022_PROGRAM_ID);
    const instructions = await PUMP_SDK.buyInstructions({ global, ...state, mint, user: whale.publicKey, amount: rest, solAmount: cost, slippage: 0, tokenProgram: TOKEN_2022_PROGRAM_ID });
    const created = [getAssociatedTokenAddressSync(mint, whale.publicKey, true, TOKEN_2022_PROGRAM_ID), userVolumeAccumulatorPda(whale.publicKey)];
    const existed = await snapshot(created);
    const before = await lamports(whale.publicKey);

    const landed = await send(instructions, [whale]);

    const trade = event<TradeEvent>(landed, 'TradeEvent');
    expect(trade.tokenAmount.toString()).toBe(rest.toString());
    expect(trade.solAmount.add(trade.fee).add(trade.creatorFee).toString()).toBe(cost.toString());
    expect(event<{ mint: PublicKey }>(landed, 'CompleteEvent').mint.equals(mint)).toBe(true);
    expect(await tokens(whale.publicKey)).toBe(big(rest));
    expect(before - (await lamports(whale.publicKey))).toBe(big(cost) + landed.fee + (await rentOfCreated(created, existed)));
    const complete = await pump.fetchBondingCurve(mint);
    expect(complete.complete).toBe(true);
    expect(complete.realTokenReserves.isZero()).toBe(true);
    expect(complete.realQuoteReserves.toString()).toBe(bondingCurve.realQuoteReserves.add(trade.solAmount).toString());
    accrued.curve += big(trade.creatorFee);
    expect(big(await pump.getCreatorVaultBalance(creator.publicKey))).toBe(accrued.curve);
  });

  test('the complete curve refuses a further buy with BondingCurveComplete and nothing moves', async () => {
    const code = pumpIdl.errors.find((e) => e.name === 'BondingCurveComplete')!.code;
    expect(code).toBe(6005);
    const { global } = await curveMarket();
    const state = await pump.fetchBuyState(mint, trader.publicKey, TOKEN_2022_PROGRAM_ID);
    const instructions = await PUMP_SDK.buyInstructions({ global, ...state, mint, user: trader.publicKey, amount: new BN(1_000_000), solAmount: new BN(LAMPORTS_PER_SOL / 10), slippage: 0, tokenProgram: TOKEN_2022_PROGRAM_ID });
    const before = { sol: await lamports(trader.publicKey), tokens: await tokens(trader.publicKey), curve: await pump.fetchBondingCurve(mint) };

    const error = await sendAndConfirmTransaction(t.connection, new Transaction().add(...instructions), [trader], { commitment: 'confirmed' }).then(
      () => new Error('expected the buy to be refused'),
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(SendTransactionError);
    const logs = (error as SendTransactionError).logs?.join('\n') ?? '';
    expect(logs).toContain(`custom program error: 0x${code.toString(16)}`);
    expect(logs).toContain('BondingCurveComplete');
    expect(await lamports(trader.publicKey)).toBe(before.sol);
    expect(await tokens(trader.publicKey)).toBe(before.tokens);
    expect(JSON.stringify(await pump.fetchBondingCurve(mint))).toBe(JSON.stringify(before.curve));
  });

  test('migrate: the pool opens with the curve\'s tokens and its SOL less Global\'s pool_migration_fee', async () => {
    const global = await pump.fetchGlobal();
    const curve = await pump.fetchBondingCurve(mint);
    completeCurve = { tokens: await tokens(bondingCurvePda(mint)), quote: big(curve.realQuoteReserves) };
    expect(completeCurve.tokens).toBe(big(global.tokenTotalSupply) - big(global.initialRealTokenReserves));
    expect(big(global.poolMigrationFee)).toBeGreaterThan(0n);
    const curveLamports = await lamports(bondingCurvePda(mint));
    const ix = await PUMP_SDK.migrateInstruction({ withdrawAuthority: global.withdrawAuthority, mint, user: whale.publicKey, tokenProgram: TOKEN_2022_PROGRAM_ID });

    const landed = await send([ix], [whale]);

    const migration = event<{ mintAmount: BN; solAmount: BN; poolMigrationFee: BN; pool: PublicKey }>(landed, 'CompletePumpAmmMigrationEvent');
    expect(migration.pool.equals(pool)).toBe(true);
    expect(big(migration.poolMigrationFee)).toBe(big(global.poolMigrationFee));
    const state = await amm.swapSolanaState(pool, trader.publicKey);
    expect(big(state.poolBaseAmount)).toBe(completeCurve.tokens);
    expect(big(state.poolQuoteAmount)).toBe(completeCurve.quote - big(global.poolMigrationFee));
    expect(big(migration.mintAmount)).toBe(completeCurve.tokens);
    expect(big(migration.solAmount)).toBe(completeCurve.quote - big(global.poolMigrationFee));
    expect(state.pool.baseMint.equals(mint)).toBe(true);
    expect(state.pool.quoteMint.equals(NATIVE_MINT)).toBe(true);
    expect(state.pool.creator.equals(pumpPoolAuthorityPda(mint))).toBe(true);
    expect(state.pool.coinCreator.equals(creator.publicKey)).toBe(true);
    // The curve gave up exactly its real SOL reserves (pool plus migration fee) and every token.
    expect(curveLamports - (await lamports(bondingCurvePda(mint)))).toBe(completeCurve.quote);
    expect(await tokens(bondingCurvePda(mint))).toBe(0n);
    const migrated = await pump.fetchBondingCurve(mint);
    expect(migrated.complete).toBe(true);
    expect(migrated.virtualTokenReserves.isZero()).toBe(true);
    expect(migrated.realQuoteReserves.isZero()).toBe(true);
  });

  test('pool buy: 1 SOL on the graduated pool buys exactly the swap SDK\'s buyQuoteInput', async () => {
    const state = await amm.swapSolanaState(pool, trader.publicKey);
    const quote = new BN(LAMPORTS_PER_SOL);
    const predicted = buyQuoteInput({ ...pricing(state), quote });
    const charged = buyBaseInput({ ...pricing(state), base: predicted.base });
    const instructions = await PUMP_AMM_SDK.buyQuoteInput(state, quote, 0);
    const feeAtas = state.globalConfig.protocolFeeRecipients.map((r) => getAssociatedTokenAddressSync(NATIVE_MINT, r, true));
    const created = [...feeAtas, coinCreatorVaultAtaPda(coinCreatorVaultAuthorityPda(creator.publicKey), NATIVE_MINT, state.quoteTokenProgram), ammUserVolumeAccumulatorPda(trader.publicKey)];
    const existed = await snapshot(created);
    const before = { sol: await lamports(trader.publicKey), tokens: await tokens(trader.publicKey) };

    const landed = await send(instructions, [trader]);

    const buy = event<AmmBuyEvent>(landed, 'buyEvent');
    expect(buy.baseAmountOut.toString()).toBe(predicted.base.toString());
    expect(buy.userQuoteAmountIn.toString()).toBe(charged.uiQuote.toString());
    expect(buy.coinCreator.equals(creator.publicKey)).toBe(true);
    expect(buy.coinCreatorFee.gtn(0)).toBe(true);
    expect((await tokens(trader.publicKey)) - before.tokens).toBe(big(predicted.base));
    // The SDK wraps through a temporary wSOL account it closes again: SOL moves by the quote, fee and new rent.
    expect(before.sol - (await lamports(trader.publicKey))).toBe(big(charged.uiQuote) + landed.fee + (await rentOfCreated(created, existed)));
    const after = await amm.swapSolanaState(pool, trader.publicKey);
    expect(big(after.poolBaseAmount)).toBe(big(state.poolBaseAmount) - big(predicted.base));
    accrued.pool += big(buy.coinCreatorFee);
    expect(big(await amm.getCoinCreatorVaultBalance(creator.publicKey))).toBe(accrued.pool);
  });

  test('pool sell: the trader\'s remaining tokens return exactly the swap SDK\'s sellBaseInput', async () => {
    const state = await amm.swapSolanaState(pool, trader.publicKey);
    const base = bn(await tokens(trader.publicKey));
    const quoted = sellBaseInput({ ...pricing(state), base });
    const instructions = await PUMP_AMM_SDK.sellBaseInput(state, base, 0);
    const feeAtas = state.globalConfig.protocolFeeRecipients.map((r) => getAssociatedTokenAddressSync(NATIVE_MINT, r, true));
    const existed = await snapshot(feeAtas);
    const before = await lamports(trader.publicKey);

    const landed = await send(instructions, [trader]);

    const sell = event<AmmSellEvent>(landed, 'sellEvent');
    expect(sell.baseAmountIn.toString()).toBe(base.toString());
    expect(sell.userQuoteAmountOut.toString()).toBe(quoted.uiQuote.toString());
    expect(sell.coinCreator.equals(creator.publicKey)).toBe(true);
    expect(sell.coinCreatorFee.gtn(0)).toBe(true);
    expect(await tokens(trader.publicKey)).toBe(0n);
    expect((await lamports(trader.publicKey)) - before).toBe(big(quoted.uiQuote) - landed.fee - (await rentOfCreated(feeAtas, existed)));
    const after = await amm.swapSolanaState(pool, trader.publicKey);
    expect(big(after.poolBaseAmount)).toBe(big(state.poolBaseAmount) + big(base));
    accrued.pool += big(sell.coinCreatorFee);
    expect(big(await amm.getCoinCreatorVaultBalance(creator.publicKey))).toBe(accrued.pool);
  });

  test('the creator collects the curve\'s creator fees (collect_creator_fee) and the pool\'s (collect_coin_creator_fee)', async () => {
    const curveVault = big(await pump.getCreatorVaultBalance(creator.publicKey));
    const poolVault = big(await amm.getCoinCreatorVaultBalance(creator.publicKey));
    expect(curveVault).toBe(accrued.curve);
    expect(poolVault).toBe(accrued.pool);
    expect(big(await pump.getCreatorVaultBalanceBothPrograms(creator.publicKey))).toBe(curveVault + poolVault);

    // The curve's vault: pump's collect_creator_fee pays out everything above the vault's rent.
    const vaultRent = BigInt(await t.connection.getMinimumBalanceForRentExemption(0));
    const collectCurve = await getPumpProgram(t.connection).methods.collectCreatorFee().accountsPartial({ creator: creator.publicKey }).instruction();
    let before = await lamports(creator.publicKey);
    const curveLanded = await send([collectCurve], [creator]);
    expect(event<{ creatorFee: BN }>(curveLanded, 'CollectCreatorFeeEvent').creatorFee.toString()).toBe(curveVault.toString());
    expect((await lamports(creator.publicKey)) - before).toBe(curveVault - curveLanded.fee);
    expect(await lamports(creatorVaultPda(creator.publicKey))).toBe(vaultRent);
    expect(big(await pump.getCreatorVaultBalance(creator.publicKey))).toBe(0n);

    // The pool's vault: PumpSwap's collect_coin_creator_fee, unwrapped by the SDK into plain SOL.
    const collectPool = await PUMP_AMM_SDK.collectCoinCreatorFee(await amm.collectCoinCreatorFeeSolanaState(creator.publicKey));
    before = await lamports(creator.publicKey);
    const poolLanded = await send(collectPool, [creator]);
    expect(event<{ coinCreatorFee: BN }>(poolLanded, 'collectCoinCreatorFeeEvent').coinCreatorFee.toString()).toBe(poolVault.toString());
    expect((await lamports(creator.publicKey)) - before).toBe(poolVault - poolLanded.fee);
    expect(big(await amm.getCoinCreatorVaultBalance(creator.publicKey))).toBe(0n);
    expect(big(await pump.getCreatorVaultBalanceBothPrograms(creator.publicKey))).toBe(0n);
  });
});
