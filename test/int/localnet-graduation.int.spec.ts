import { AccountInfo, Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction, TransactionInstruction, sendAndConfirmTransaction } from '@solana/web3.js';
import { NATIVE_MINT, TOKEN_2022_PROGRAM_ID, getAssociatedTokenAddressSync } from '@solana/spl-token';
import BN from 'bn.js';
import {
  OnlinePumpSdk,
  PUMP_SDK,
  bondingCurvePda,
  canonicalPumpPoolPda,
  getBuySolAmountFromTokenAmount,
  getPumpProgram,
  pumpPoolAuthorityPda,
} from '@pump-fun/pump-sdk';
import { OFFLINE_PUMP_AMM_PROGRAM, OnlinePumpAmmSdk, PUMP_AMM_SDK, buyQuoteInput, sellBaseInput } from '@pump-fun/pump-swap-sdk';
import { FAUCET, MIGRATOR } from '@svc/app-localnet';
import { emulatedPrograms } from '../../apps/localnet/src/programs';
import { localnet, type LocalnetClient } from '../support/localnet';
import { tempDir } from '../support/env';
import { swapPricing } from '../support/pumpAmm';

/**
 * The localnet graduates pump coins by itself, as pump's migrator does on mainnet: a buy that completes a bonding
 * curve is followed, a slot later, by the real `migrate`, signed and paid by the localnet's migrator key. The tests
 * wait for the pool the way any client can, by looking for its account at every slot notification, and then trade
 * on it with the unmodified PumpSwap SDK.
 */

const big = (n: BN | bigint | number) => BigInt(n.toString());

/** Resolves with the account once it exists, looking at once and again at every slot (the localnet's slot clock ticks on its own). */
function accountAppears(connection: Connection, address: PublicKey): Promise<AccountInfo<Buffer>> {
  return new Promise((resolve, reject) => {
    let found = false;
    const look = () =>
      connection.getAccountInfo(address, 'confirmed').then((info) => {
        if (!info || found) return;
        found = true;
        void connection.removeSlotChangeListener(listener);
        resolve(info);
      }, reject);
    const listener = connection.onSlotChange(() => void look());
    void look();
  });
}

interface Market {
  t: LocalnetClient;
  pump: OnlinePumpSdk;
}

async function send(t: LocalnetClient, instructions: TransactionInstruction[], signers: Keypair[]): Promise<string> {
  return sendAndConfirmTransaction(t.connection, new Transaction().add(...instructions), signers, { commitment: 'confirmed' });
}

async function createCoin({ t }: Market, creator: Keypair, symbol: string, mayhemMode: boolean): Promise<PublicKey> {
  const mint = Keypair.generate();
  const ix = await PUMP_SDK.createV2Instruction({ mint: mint.publicKey, name: symbol, symbol, uri: `https://example.com/${symbol}.json`, creator: creator.publicKey, user: creator.publicKey, mayhemMode });
  await send(t, [ix], [creator, mint]);
  return mint.publicKey;
}

/** Buys every token left on the curve at the SDK's quoted cost; the curve completes. */
async function buyOut({ t, pump }: Market, mint: PublicKey, whale: Keypair): Promise<{ signature: string; slot: number; tokens: bigint; quote: bigint }> {
  const [global, feeConfig, state] = await Promise.all([pump.fetchGlobal(), pump.fetchFeeConfig(), pump.fetchBuyState(mint, whale.publicKey, TOKEN_2022_PROGRAM_ID)]);
  const rest = state.bondingCurve.realTokenReserves;
  const mintSupply = new BN((await t.connection.getTokenSupply(mint)).value.amount);
  const cost = getBuySolAmountFromTokenAmount({ global, feeConfig, mintSupply, bondingCurve: state.bondingCurve, amount: rest, quoteMint: NATIVE_MINT });
  const signature = await send(t, await PUMP_SDK.buyInstructions({ global, ...state, mint, user: whale.publicKey, amount: rest, solAmount: cost, slippage: 0, tokenProgram: TOKEN_2022_PROGRAM_ID }), [whale]);
  const landed = await t.connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
  // As the buy left the curve, not as read afterwards: on a busy machine the keeper may have migrated it already.
  const vault = getAssociatedTokenAddressSync(mint, bondingCurvePda(mint), true, TOKEN_2022_PROGRAM_ID);
  const keys = landed!.transaction.message.getAccountKeys({ accountKeysFromLookups: landed!.meta!.loadedAddresses });
  const after = landed!.meta!.postTokenBalances!.find((b) => keys.get(b.accountIndex)!.equals(vault))!;
  const trade = (await pumpEvents(t, signature)).find((e) => e.name === 'tradeEvent')!.data as { realQuoteReserves: BN; realSolReserves: BN; isBuy: boolean };
  expect(trade.isBuy).toBe(true);
  const quote = big(trade.realQuoteReserves) > 0n ? big(trade.realQuoteReserves) : big(trade.realSolReserves);
  expect((await pump.fetchBondingCurve(mint)).complete).toBe(true);
  return { signature, slot: landed!.slot, tokens: BigInt(after.uiTokenAmount.amount), quote };
}

/** The anchor events of the pump program a landed transaction logged. */
async function pumpEvents(t: LocalnetClient, signature: string): Promise<{ name: string; data: Record<string, unknown> }[]> {
  const tx = await t.connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
  const coder = getPumpProgram(t.connection).coder;
  return (tx?.meta?.logMessages ?? [])
    .filter((line) => line.startsWith('Program data: '))
    .map((line) => coder.events.decode(line.slice('Program data: '.length)))
    .filter((event): event is NonNullable<typeof event> => !!event)
    .map((event) => ({ name: event.name, data: event.data as Record<string, unknown> }));
}

/**
 * What a landed transaction cost its fee payer besides the trade: the network fee and the rent of the accounts it
 * created (a protocol fee recipient's wrapped-SOL account is opened by the first trade that pays it).
 */
async function costOf(t: LocalnetClient, signature: string): Promise<bigint> {
  const tx = (await t.connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 }))!;
  const keys = tx.transaction.message.staticAccountKeys;
  let rent = 0n;
  for (const [i, pre] of tx.meta!.preBalances.entries()) {
    if (i === 0 || pre !== 0 || tx.meta!.postBalances[i] === 0) continue;
    const created = await t.connection.getAccountInfo(keys[i]!);
    rent += BigInt(await t.connection.getMinimumBalanceForRentExemption(created?.data.length ?? 0));
  }
  return BigInt(tx.meta!.fee) + rent;
}

describe('the graduation keeper migrates a complete curve into its canonical PumpSwap pool', () => {
  let t: LocalnetClient;
  let market: Market;
  let amm: OnlinePumpAmmSdk;
  let creator: Keypair;
  let whale: Keypair;
  const faults: unknown[] = [];

  beforeAll(async () => {
    t = await localnet({ programs: emulatedPrograms(), onError: (error) => faults.push(error) });
    market = { t, pump: new OnlinePumpSdk(t.connection) };
    amm = new OnlinePumpAmmSdk(t.connection);
    [creator, whale] = await Promise.all([t.funded(5), t.funded(400)]);
  });
  afterAll(async () => {
    await t?.close();
    expect(faults).toEqual([]);
  });

  test('a slot after the buy that completes the curve, the migrator\'s migrate opens the pool with the curve\'s reserves', async () => {
    expect(t.net.keeper).not.toBeNull();
    const global = await market.pump.fetchGlobal();
    const mint = await createCoin(market, creator, 'GRAD', false);
    const pool = canonicalPumpPoolPda(mint);
    const migratorBefore = await t.connection.getBalance(MIGRATOR.publicKey);

    const completed = await buyOut(market, mint, whale);
    const info = await accountAppears(t.connection, pool);

    expect(info.owner.equals(OFFLINE_PUMP_AMM_PROGRAM.programId)).toBe(true);
    const migration = await t.net.keeper!.whenMigrated(mint);
    expect(migration.pool.equals(pool)).toBe(true);
    const tx = await t.connection.getTransaction(migration.signature!, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(tx!.meta!.err).toBeNull();
    expect(tx!.slot).toBeGreaterThan(completed.slot);
    expect(tx!.transaction.message.staticAccountKeys[0]!.equals(MIGRATOR.publicKey)).toBe(true);
    const event = (await pumpEvents(t, migration.signature!)).find((e) => e.name === 'completePumpAmmMigrationEvent')!.data as { user: PublicKey; mintAmount: BN; solAmount: BN };
    expect(event.user.equals(MIGRATOR.publicKey)).toBe(true);
    expect(big(event.mintAmount)).toBe(completed.tokens);
    expect(big(event.solAmount)).toBe(completed.quote - big(global.poolMigrationFee));

    const state = await amm.swapSolanaState(pool, whale.publicKey);
    expect(big(state.poolBaseAmount)).toBe(completed.tokens);
    expect(big(state.poolQuoteAmount)).toBe(completed.quote - big(global.poolMigrationFee));
    expect(state.pool.creator.equals(pumpPoolAuthorityPda(mint))).toBe(true);
    expect(state.pool.coinCreator.equals(creator.publicKey)).toBe(true);
    const curve = await market.pump.fetchBondingCurve(mint);
    expect(curve.complete).toBe(true);
    expect(curve.virtualTokenReserves.isZero()).toBe(true);
    // The localnet keeps its migrator funded from the faucet, with recorded transfers.
    const funding = await t.connection.getSignaturesForAddress(MIGRATOR.publicKey);
    const fundedFromFaucet = await Promise.all(funding.map((s) => t.connection.getTransaction(s.signature, { maxSupportedTransactionVersion: 0 })));
    expect(fundedFromFaucet.some((r) => r!.transaction.message.staticAccountKeys[0]!.equals(FAUCET.publicKey))).toBe(true);
    expect(migratorBefore).toBe(0);
    expect(await t.connection.getBalance(MIGRATOR.publicKey)).toBeGreaterThan(LAMPORTS_PER_SOL);

    // Already migrated: whenMigrated answers at once with the same migration.
    expect((await t.net.keeper!.whenMigrated(mint)).signature).toBe(migration.signature);
  }, 60_000);

  test('the PumpSwap SDK buys and sells on the pool the keeper opened, at its own quotes', async () => {
    const mint = await createCoin(market, creator, 'TRADE', false);
    await buyOut(market, mint, whale);
    const pool = canonicalPumpPoolPda(mint);
    await accountAppears(t.connection, pool);
    const trader = await t.funded(5);

    const state = await amm.swapSolanaState(pool, trader.publicKey);
    const predicted = buyQuoteInput({ ...swapPricing(state), quote: new BN(LAMPORTS_PER_SOL) });
    await send(t, await PUMP_AMM_SDK.buyQuoteInput(state, new BN(LAMPORTS_PER_SOL), 0), [trader]);
    const held = BigInt((await t.connection.getTokenAccountBalance(getAssociatedTokenAddressSync(mint, trader.publicKey, false, TOKEN_2022_PROGRAM_ID))).value.amount);
    expect(held).toBe(big(predicted.base));

    const after = await amm.swapSolanaState(pool, trader.publicKey);
    const proceeds = sellBaseInput({ ...swapPricing(after), base: new BN(held.toString()) });
    const before = BigInt(await t.connection.getBalance(trader.publicKey));
    const signature = await send(t, await PUMP_AMM_SDK.sellBaseInput(after, new BN(held.toString()), 0), [trader]);
    expect(BigInt(await t.connection.getBalance(trader.publicKey)) - before).toBe(big(proceeds.uiQuote) - (await costOf(t, signature)));
  }, 60_000);

  test('a graduated mayhem coin trades on its pool; its protocol fee goes to one of the reserved recipients', async () => {
    const mint = await createCoin(market, creator, 'MAYHEM', true);
    expect((await market.pump.fetchBondingCurve(mint)).isMayhemMode).toBe(true);
    await buyOut(market, mint, whale);
    const pool = canonicalPumpPoolPda(mint);
    await accountAppears(t.connection, pool);
    const trader = await t.funded(5);

    const state = await amm.swapSolanaState(pool, trader.publicKey);
    expect(state.pool.isMayhemMode).toBe(true);
    const reserved = [state.globalConfig.reservedFeeRecipient, ...state.globalConfig.reservedFeeRecipients];
    expect(reserved.every((r) => !r.equals(PublicKey.default))).toBe(true);
    const reservedAtas = reserved.map((r) => getAssociatedTokenAddressSync(NATIVE_MINT, r, true));
    const wsol = async () => Promise.all(reservedAtas.map((a) => t.connection.getTokenAccountBalance(a).then((b) => BigInt(b.value.amount), () => 0n)));
    const feesBefore = await wsol();

    const predicted = buyQuoteInput({ ...swapPricing(state), quote: new BN(LAMPORTS_PER_SOL) });
    const bought = await send(t, await PUMP_AMM_SDK.buyQuoteInput(state, new BN(LAMPORTS_PER_SOL), 0), [trader]);
    const held = BigInt((await t.connection.getTokenAccountBalance(getAssociatedTokenAddressSync(mint, trader.publicKey, false, TOKEN_2022_PROGRAM_ID))).value.amount);
    expect(held).toBe(big(predicted.base));
    const buyEvent = (await t.connection.getTransaction(bought, { maxSupportedTransactionVersion: 0 }))!
      .meta!.logMessages!.filter((l) => l.startsWith('Program data: '))
      .map((l) => OFFLINE_PUMP_AMM_PROGRAM.coder.events.decode(l.slice('Program data: '.length)))
      .find((e) => e?.name === 'buyEvent')!.data as { protocolFee: BN; protocolFeeRecipient: PublicKey };
    expect(reserved.some((r) => r.equals(buyEvent.protocolFeeRecipient))).toBe(true);
    const feesAfterBuy = await wsol();
    expect(feesAfterBuy.reduce((a, b) => a + b, 0n) - feesBefore.reduce((a, b) => a + b, 0n)).toBe(big(buyEvent.protocolFee));

    const after = await amm.swapSolanaState(pool, trader.publicKey);
    const proceeds = sellBaseInput({ ...swapPricing(after), base: new BN(held.toString()) });
    const before = BigInt(await t.connection.getBalance(trader.publicKey));
    const sold = await send(t, await PUMP_AMM_SDK.sellBaseInput(after, new BN(held.toString()), 0), [trader]);
    expect(BigInt(await t.connection.getBalance(trader.publicKey)) - before).toBe(big(proceeds.uiQuote) - (await costOf(t, sold)));
    expect(BigInt((await t.connection.getTokenAccountBalance(getAssociatedTokenAddressSync(mint, trader.publicKey, false, TOKEN_2022_PROGRAM_ID))).value.amount)).toBe(0n);
  }, 60_000);
});

describe('a curve someone else migrates first', () => {
  test('the keeper finds nothing left to do, and reports no fault', async () => {
    // The clock stands still until the test moves it, so the whale's migrate lands in the slot of its buy-out,
    // before the keeper, which waits for the next slot, looks.
    let clock = Date.now();
    const faults: unknown[] = [];
    const t = await localnet({ programs: emulatedPrograms(), now: () => clock, onError: (error) => faults.push(error) });
    try {
      const market = { t, pump: new OnlinePumpSdk(t.connection) };
      const [creator, whale] = await Promise.all([t.funded(5), t.funded(400)]);
      const mint = await createCoin(market, creator, 'RACE', false);
      const completed = await buyOut(market, mint, whale);
      const global = await market.pump.fetchGlobal();
      const migrate = await PUMP_SDK.migrateInstruction({ withdrawAuthority: global.withdrawAuthority, mint, user: whale.publicKey, tokenProgram: TOKEN_2022_PROGRAM_ID });
      const signature = await send(t, [migrate], [whale]);
      expect((await t.connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 }))!.slot).toBe(completed.slot);

      clock += 1_000;
      await t.net.keeper!.idle();

      const migration = await t.net.keeper!.whenMigrated(mint);
      expect(migration.signature).toBe(signature);
      expect(await t.connection.getSignaturesForAddress(canonicalPumpPoolPda(mint))).toHaveLength(1);
      expect(await t.connection.getBalance(MIGRATOR.publicKey)).toBe(0);
    } finally {
      await t.close();
    }
    expect(faults).toEqual([]);
  }, 60_000);
});

describe('a complete curve found unmigrated when the chain starts is migrated', () => {
  test('bought out on a chain without the keeper, then migrated by the keeper after a restart', async () => {
    const dataDir = tempDir('localnet-graduation');
    let t = await localnet({ dataDir, graduationKeeper: false });
    let mint: PublicKey;
    let completed: Awaited<ReturnType<typeof buyOut>>;
    try {
      expect(t.net.keeper).toBeNull();
      const market = { t, pump: new OnlinePumpSdk(t.connection) };
      const [creator, whale] = await Promise.all([t.funded(5), t.funded(400)]);
      mint = await createCoin(market, creator, 'LATE', false);
      completed = await buyOut(market, mint, whale);
      expect(await t.connection.getAccountInfo(canonicalPumpPoolPda(mint))).toBeNull();
    } finally {
      await t.close();
    }

    const faults: unknown[] = [];
    t = await localnet({ dataDir, onError: (error) => faults.push(error) });
    try {
      await accountAppears(t.connection, canonicalPumpPoolPda(mint));
      const amm = new OnlinePumpAmmSdk(t.connection);
      const state = await amm.swapSolanaState(canonicalPumpPoolPda(mint), Keypair.generate().publicKey);
      expect(big(state.poolBaseAmount)).toBe(completed.tokens);
      const global = await new OnlinePumpSdk(t.connection).fetchGlobal();
      expect(big(state.poolQuoteAmount)).toBe(completed.quote - big(global.poolMigrationFee));
      expect((await t.net.keeper!.whenMigrated(mint)).pool.equals(canonicalPumpPoolPda(mint))).toBe(true);
    } finally {
      await t.close();
    }
    expect(faults).toEqual([]);
  }, 60_000);
});
