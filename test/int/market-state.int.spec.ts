import { Connection, Keypair, PublicKey, Transaction, sendAndConfirmTransaction, type TransactionInstruction } from '@solana/web3.js';
import { NATIVE_MINT, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID, createMint, getMint } from '@solana/spl-token';
import BN from 'bn.js';
import {
  OnlinePumpSdk,
  PUMP_SDK,
  bondingCurveMarketCap,
  bondingCurvePda,
  canonicalPumpPoolPda,
  getBuySolAmountFromTokenAmount,
  getBuyTokenAmountFromSolAmount,
} from '@pump-fun/pump-sdk';
import { OnlinePumpAmmSdk } from '@pump-fun/pump-swap-sdk';
import { rawToUi, readMarketStates, type MarketState } from '@svc/chain';
import { closeConnection, localnet, type LocalnetClient } from '../support/localnet';

const big = (n: BN | bigint | number) => BigInt(n.toString());
const relative = (a: number, b: number) => Math.abs(a - b) / Math.abs(b);

/**
 * The batched market reader against the bundled chain, every figure checked against what the unmodified pump and
 * PumpSwap SDKs decode from the same accounts: a coin on its curve before and after a buy, a graduated coin in its
 * pool, a plain SPL mint, an address that is no mint, and all of them at once in a few 100-key calls.
 */
describe('readMarketStates', () => {
  let t: LocalnetClient;
  /** The same chain, counting getMultipleAccounts calls. */
  let counted: Connection;
  let calls = 0;
  let pump: OnlinePumpSdk;
  let amm: OnlinePumpAmmSdk;
  let creator: Keypair;
  let trader: Keypair;
  let whale: Keypair;
  let onCurve: PublicKey;
  let graduated: PublicKey;
  let plain: PublicKey;

  beforeAll(async () => {
    t = await localnet();
    counted = new Connection(t.net.rpcUrl, {
      commitment: 'confirmed',
      wsEndpoint: t.net.wsUrl,
      fetch: async (input, init) => {
        if (typeof init?.body === 'string' && JSON.parse(init.body).method === 'getMultipleAccounts') calls++;
        return fetch(input, init);
      },
    });
    pump = new OnlinePumpSdk(t.connection);
    amm = new OnlinePumpAmmSdk(t.connection);
    [creator, trader, whale] = await Promise.all([t.funded(5), t.funded(20), t.funded(400)]);
  }, 60_000);
  afterAll(async () => {
    if (counted) await closeConnection(counted);
    await t?.close();
  });

  async function send(instructions: TransactionInstruction[], signers: Keypair[]): Promise<void> {
    await sendAndConfirmTransaction(t.connection, new Transaction().add(...instructions), signers, { commitment: 'confirmed' });
  }
  async function createCoin(symbol: string): Promise<PublicKey> {
    const mint = Keypair.generate();
    const ix = await PUMP_SDK.createV2Instruction({ mint: mint.publicKey, name: symbol, symbol, uri: `https://example.com/${symbol}.json`, creator: creator.publicKey, user: creator.publicKey, mayhemMode: false });
    await send([ix], [creator, mint]);
    return mint.publicKey;
  }
  /** Buys with `lamports` (or buys out what is left on the curve) at the SDK’s quoted cost. */
  async function buy(mint: PublicKey, who: Keypair, lamports?: bigint): Promise<void> {
    const [global, feeConfig, state] = await Promise.all([pump.fetchGlobal(), pump.fetchFeeConfig(), pump.fetchBuyState(mint, who.publicKey, TOKEN_2022_PROGRAM_ID)]);
    const mintSupply = new BN((await t.connection.getTokenSupply(mint)).value.amount);
    const inputs = { global, feeConfig, mintSupply, bondingCurve: state.bondingCurve, quoteMint: NATIVE_MINT };
    const amount = lamports === undefined ? state.bondingCurve.realTokenReserves : getBuyTokenAmountFromSolAmount({ ...inputs, amount: new BN(lamports.toString()) });
    const cost = getBuySolAmountFromTokenAmount({ ...inputs, amount });
    await send(await PUMP_SDK.buyInstructions({ global, ...state, mint, user: who.publicKey, amount, solAmount: cost, slippage: 0, tokenProgram: TOKEN_2022_PROGRAM_ID }), [who]);
  }
  async function one(mint: PublicKey): Promise<MarketState | null> {
    return (await readMarketStates(t.connection, [mint])).states.get(mint.toBase58())!;
  }

  /** The coin's curve figures as the SDK decodes them, in the reader's units. */
  async function expectCurveFigures(mint: PublicKey, state: MarketState): Promise<void> {
    const [curve, global, info] = await Promise.all([pump.fetchBondingCurve(mint), pump.fetchGlobal(), getMint(t.connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID)]);
    expect(state).toMatchObject({
      mint: mint.toBase58(),
      venue: 'pump',
      tokenProgram: TOKEN_2022_PROGRAM_ID.toBase58(),
      decimals: 6,
      supply: rawToUi(info.supply, 6),
      bondingCurve: bondingCurvePda(mint).toBase58(),
      creator: creator.publicKey.toBase58(),
      complete: false,
      mayhem: false,
      pool: null,
      curve: {
        virtualTokenReserves: rawToUi(big(curve.virtualTokenReserves), 6),
        virtualSolReserves: rawToUi(big(curve.virtualQuoteReserves), 9),
        realTokenReserves: rawToUi(big(curve.realTokenReserves), 6),
        realSolReserves: rawToUi(big(curve.realQuoteReserves), 9),
      },
    });
    expect(state.priceSol).toBe(rawToUi(big(curve.virtualQuoteReserves), 9) / rawToUi(big(curve.virtualTokenReserves), 6));
    // pump's own market cap (lamports, integer division) agrees to the last lamport it can express.
    const sdkCap = Number(bondingCurveMarketCap({ mintSupply: new BN(info.supply.toString()), virtualQuoteReserves: curve.virtualQuoteReserves, virtualTokenReserves: curve.virtualTokenReserves }).toString()) / 1e9;
    expect(relative(state.marketCapSol!, sdkCap)).toBeLessThan(1e-9);
    expect(state.progress).toBe(1 - Number(big(curve.realTokenReserves)) / Number(big(global.initialRealTokenReserves)));
  }

  test('a coin on its curve: reserves, price, market cap and progress are the curve the SDK decodes, before and after a buy', async () => {
    onCurve = await createCoin('CURV');
    const fresh = (await one(onCurve))!;
    await expectCurveFigures(onCurve, fresh);
    expect(fresh.progress).toBe(0);

    await buy(onCurve, trader, 2_000_000_000n);
    const bought = (await one(onCurve))!;
    await expectCurveFigures(onCurve, bought);
    expect(bought.progress).toBeGreaterThan(0);
    expect(bought.priceSol).toBeGreaterThan(fresh.priceSol!);
    expect(bought.curve!.realSolReserves).toBeGreaterThan(0);
  });

  test('a graduated coin: its PumpSwap pool’s reserves and price, progress 1', async () => {
    graduated = await createCoin('GRAD');
    await buy(graduated, whale);
    const migration = await t.net.keeper!.whenMigrated(graduated);
    const pool = canonicalPumpPoolPda(graduated);
    expect(migration.pool.equals(pool)).toBe(true);

    const state = (await one(graduated))!;
    const swap = await amm.swapSolanaState(pool, whale.publicKey);
    const [base, quote, virtualQuote] = [big(swap.poolBaseAmount), big(swap.poolQuoteAmount), big(swap.pool.virtualQuoteReserves)];
    expect(state).toMatchObject({
      venue: 'pump-amm',
      bondingCurve: bondingCurvePda(graduated).toBase58(),
      creator: creator.publicKey.toBase58(),
      complete: true,
      progress: 1,
      pool: { address: pool.toBase58(), baseReserve: rawToUi(base, 6), quoteReserve: rawToUi(quote, 9), virtualQuoteReserve: rawToUi(virtualQuote, 9) },
    });
    expect(state.curve!.realTokenReserves).toBe(0);
    expect(state.priceSol).toBe(rawToUi(quote + virtualQuote, 9) / rawToUi(base, 6));
    expect(state.marketCapSol).toBe(state.priceSol! * state.supply);
  }, 60_000);

  test('a plain SPL mint has no pump market; an address that is no mint has no state', async () => {
    plain = await createMint(t.connection, creator, creator.publicKey, null, 2, undefined, { commitment: 'confirmed' }, TOKEN_PROGRAM_ID);
    expect(await one(plain)).toEqual({
      mint: plain.toBase58(),
      venue: 'jupiter',
      tokenProgram: TOKEN_PROGRAM_ID.toBase58(),
      decimals: 2,
      supply: 0,
      bondingCurve: null,
      creator: null,
      curve: null,
      complete: false,
      mayhem: false,
      pool: null,
      priceSol: null,
      marketCapSol: null,
      progress: null,
    });
    expect(await one(Keypair.generate().publicKey)).toBeNull();
    // A wallet is an account, but not a mint.
    expect(await one(creator.publicKey)).toBeNull();
  });

  test('many mints in one reading: 100 keys a call, the pools’ token accounts in one more, the same figures', async () => {
    const nobody = Array.from({ length: 40 }, () => Keypair.generate().publicKey);
    const alone = await Promise.all([onCurve, graduated, plain].map(one));
    calls = 0;
    const all = await readMarketStates(counted, [onCurve, graduated, plain, ...nobody, onCurve]);
    // Global + 3 accounts for each of 43 mints is 130 keys: two calls; the graduated coin's pool accounts: one more.
    expect(calls).toBe(3);
    expect(all.slot).toBeGreaterThan(0);
    expect(all.states.size).toBe(43);
    expect([onCurve, graduated, plain].map((m) => all.states.get(m.toBase58()))).toEqual(alone);
    for (const key of nobody) expect(all.states.get(key.toBase58())).toBeNull();
    expect((await readMarketStates(counted, [])).states.size).toBe(0);
    expect(calls).toBe(3);
  });
});
