import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction, TransactionInstruction, VersionedTransaction, sendAndConfirmTransaction } from '@solana/web3.js';
import BN from 'bn.js';
import { NATIVE_MINT, TOKEN_2022_PROGRAM_ID, createMint, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { OnlinePumpSdk, PUMP_SDK, bondingCurvePda, canonicalPumpPoolPda, getBuySolAmountFromTokenAmount } from '@pump-fun/pump-sdk';
import { pumpProgram } from '../../apps/localnet/src/programs/pump';
import { pumpFeesProgram } from '../../apps/localnet/src/programs/pumpFees';
import { pumpSwapProgram } from '../../apps/localnet/src/programs/pumpSwap';
import { LOCAL_USD_MINT, jupiterRoutes, stablecoinSeed } from '../../apps/localnet/src/jupiter';
import { localnet, type LocalnetClient } from '../support/localnet';

type Quote = {
  inputMint: string;
  inAmount: string;
  outputMint: string;
  outAmount: string;
  otherAmountThreshold: string;
  routePlan: { swapInfo: Record<string, string>; percent: number }[];
  [field: string]: unknown;
};

async function getJson(url: string): Promise<{ status: number; body: any }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.json() };
}

async function postJson(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

async function quote(rpcUrl: string, params: { inputMint: string; outputMint: string; amount: number | bigint; slippageBps: number }): Promise<Quote> {
  const query = new URLSearchParams({ ...params, amount: String(params.amount), slippageBps: String(params.slippageBps) });
  const { status, body } = await getJson(`${rpcUrl}/swap/v1/quote?${query}`);
  if (status !== 200) throw new Error(`quote failed: ${JSON.stringify(body)}`);
  return body;
}

/**
 * Signs and sends the swap the API builds for `quote`, and accounts for the user's lamports: what left the wallet,
 * the rent of every account the transaction created (all paid by the user) and the network fee.
 */
async function executeSwap(rpcUrl: string, connection: Connection, user: Keypair, quoted: Quote) {
  const { status, body } = await postJson(`${rpcUrl}/swap/v1/swap`, { quoteResponse: quoted, userPublicKey: user.publicKey.toBase58(), wrapAndUnwrapSol: true });
  if (status !== 200) throw new Error(`swap failed: ${JSON.stringify(body)}`);
  const tx = VersionedTransaction.deserialize(Buffer.from(body.swapTransaction, 'base64'));
  tx.sign([user]);
  const keys = tx.message.staticAccountKeys;
  const before = await connection.getMultipleAccountsInfo(keys);
  const signature = await connection.sendRawTransaction(tx.serialize());
  const confirmed = await connection.confirmTransaction({ signature, blockhash: tx.message.recentBlockhash, lastValidBlockHeight: body.lastValidBlockHeight });
  if (confirmed.value.err) throw new Error(`swap transaction failed: ${JSON.stringify(confirmed.value.err)}`);
  const after = await connection.getMultipleAccountsInfo(keys);
  let rentPaid = 0n;
  for (let i = 1; i < keys.length; i++) {
    const created = after[i];
    if (!before[i] && created) rentPaid += BigInt(await connection.getMinimumBalanceForRentExemption(created.data.length));
  }
  const record = await connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
  return { solSpent: BigInt(before[0]!.lamports) - BigInt(after[0]!.lamports), rentPaid, fee: BigInt(record!.meta!.fee), signature };
}

/**
 * An ExactIn buy spends its budget: the exact-input instructions take the largest amount whose fees still fit,
 * which leaves at most a few lamports of rounding with the user.
 */
function expectBudgetSpent(spent: bigint, quoted: Quote): void {
  expect(spent).toBeLessThanOrEqual(BigInt(quoted.inAmount));
  expect(spent).toBeGreaterThanOrEqual(BigInt(quoted.inAmount) - 4n);
}

const SOL = NATIVE_MINT.toBase58();
const USD = LOCAL_USD_MINT.toBase58();

let chain: LocalnetClient;
let net: LocalnetClient['net'];
let connection: Connection;
const funded = (sol: number) => chain.funded(sol);

beforeAll(async () => {
  chain = await localnet({
    programs: [pumpProgram, pumpSwapProgram, pumpFeesProgram],
    seeds: [stablecoinSeed()],
    routes: [jupiterRoutes({ solUsd: 150 })],
  });
  ({ net, connection } = chain);
});

afterAll(() => chain.close());

async function tokenBalance(mint: PublicKey, owner: PublicKey, tokenProgram?: PublicKey): Promise<bigint> {
  const account = await connection.getTokenAccountBalance(getAssociatedTokenAddressSync(mint, owner, true, tokenProgram)).catch(() => null);
  return BigInt(account?.value.amount ?? 0);
}

const usdBalance = (owner: PublicKey) => tokenBalance(LOCAL_USD_MINT, owner);

async function send(instructions: TransactionInstruction[], signers: Keypair[]): Promise<void> {
  await sendAndConfirmTransaction(connection, new Transaction().add(...instructions), signers, { commitment: 'confirmed' });
}

/** A new pump coin on its bonding curve, created with the unmodified pump SDK. */
async function createCoin(creator: Keypair, symbol: string): Promise<PublicKey> {
  const mint = Keypair.generate();
  const create = await PUMP_SDK.createV2Instruction({ mint: mint.publicKey, name: symbol, symbol, uri: `https://example.com/${symbol}.json`, creator: creator.publicKey, user: creator.publicKey, mayhemMode: false });
  await send([create], [creator, mint]);
  return mint.publicKey;
}

describe('Jupiter price API over the localnet', () => {
  it('prices SOL from the option and the stablecoin at one dollar through its pool', async () => {
    const { status, body } = await getJson(`${net.rpcUrl}/price/v3?ids=${SOL},${USD},${Keypair.generate().publicKey.toBase58()},garbage`);
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual([SOL, USD].sort());
    expect(body[SOL]).toMatchObject({ usdPrice: 150, decimals: 9, priceChange24h: null });
    expect(body[USD].decimals).toBe(6);
    expect(body[USD].usdPrice).toBeCloseTo(1, 9);
    expect(body[USD].blockId).toEqual(expect.any(Number));
  });

  it('asks for ids', async () => {
    const { status, body } = await getJson(`${net.rpcUrl}/price/v3`);
    expect(status).toBe(400);
    expect(body.errorCode).toBe('INVALID_REQUEST');
  });
});

describe('Jupiter swap API over the stablecoin pool', () => {
  it('quotes SOL → USD on the PumpSwap pool, and the swap moves exactly the quoted amounts', async () => {
    const user = await funded(5);
    const q = await quote(net.rpcUrl, { inputMint: SOL, outputMint: USD, amount: LAMPORTS_PER_SOL, slippageBps: 100 });
    expect(q).toMatchObject({ inputMint: SOL, outputMint: USD, inAmount: String(LAMPORTS_PER_SOL), swapMode: 'ExactIn', slippageBps: 100, platformFee: null });
    expect(q.routePlan).toHaveLength(1);
    expect(q.routePlan[0]).toMatchObject({ percent: 100, swapInfo: { label: 'Pump.fun Amm', inputMint: SOL, outputMint: USD, feeMint: SOL } });
    const out = BigInt(q.outAmount);
    // 1 SOL at 150 USD, less 0.3% of fees and a little impact, in 6-decimal units.
    expect(Number(out) / 1e6).toBeGreaterThan(149);
    expect(Number(out) / 1e6).toBeLessThan(150);
    expect(BigInt(q.otherAmountThreshold)).toBe((out * 9_900n) / 10_000n);

    const { solSpent, rentPaid, fee } = await executeSwap(net.rpcUrl, connection, user, q);
    expect(await usdBalance(user.publicKey)).toBe(out);
    expectBudgetSpent(solSpent - rentPaid - fee, q);
  });

  it('quotes USD → SOL on the same pool, and the swap pays out exactly the quoted SOL', async () => {
    const user = await funded(5);
    const bought = await quote(net.rpcUrl, { inputMint: SOL, outputMint: USD, amount: 2 * LAMPORTS_PER_SOL, slippageBps: 50 });
    await executeSwap(net.rpcUrl, connection, user, bought);
    const usd = await usdBalance(user.publicKey);

    const q = await quote(net.rpcUrl, { inputMint: USD, outputMint: SOL, amount: Number(usd), slippageBps: 50 });
    expect(q.routePlan[0].swapInfo).toMatchObject({ label: 'Pump.fun Amm', ammKey: bought.routePlan[0].swapInfo.ammKey, feeMint: SOL });
    const { solSpent, rentPaid, fee } = await executeSwap(net.rpcUrl, connection, user, q);
    expect(await usdBalance(user.publicKey)).toBe(0n);
    expect(-(solSpent - rentPaid - fee)).toBe(BigInt(q.outAmount));
  });

  it('refuses on-chain when the price moved past the quote\'s threshold', async () => {
    const [late, early] = [await funded(5), await funded(20)];
    const stale = await quote(net.rpcUrl, { inputMint: SOL, outputMint: USD, amount: LAMPORTS_PER_SOL, slippageBps: 10 });
    const front = await quote(net.rpcUrl, { inputMint: SOL, outputMint: USD, amount: 10 * LAMPORTS_PER_SOL, slippageBps: 50 });
    await executeSwap(net.rpcUrl, connection, early, front);
    await expect(executeSwap(net.rpcUrl, connection, late, stale)).rejects.toThrow(/custom program error|Custom/);
    expect(await usdBalance(late.publicKey)).toBe(0n);
  });
});

describe('Jupiter swap API refusals', () => {
  const url = (params: Record<string, string>) => `${net.rpcUrl}/swap/v1/quote?${new URLSearchParams(params)}`;

  it.each([
    [{ inputMint: SOL, outputMint: Keypair.generate().publicKey.toBase58(), amount: '1000' }, 'TOKEN_NOT_TRADABLE'],
    [{ inputMint: SOL, outputMint: SOL, amount: '1000' }, 'CIRCULAR_ARBITRAGE_IS_DISABLED'],
    [{ inputMint: SOL, outputMint: USD, amount: 'lots' }, 'INVALID_REQUEST'],
    [{ inputMint: SOL, outputMint: USD, amount: '0' }, 'INVALID_REQUEST'],
    [{ inputMint: SOL, outputMint: USD, amount: '18446744073709551616' }, 'INVALID_REQUEST'],
    [{ inputMint: SOL, outputMint: USD, amount: '1000', slippageBps: '-1' }, 'INVALID_REQUEST'],
    [{ inputMint: SOL, outputMint: USD, amount: '1000', swapMode: 'ExactOut' }, 'NOT_SUPPORTED'],
    [{ inputMint: 'not-a-mint', outputMint: USD, amount: '1000' }, 'INVALID_REQUEST'],
    [{ outputMint: USD, amount: '1000' }, 'INVALID_REQUEST'],
    [{ inputMint: SOL, outputMint: USD, amount: '1' }, 'COULD_NOT_FIND_ANY_ROUTE'],
  ])('quote %j answers 400 %s', async (params, errorCode) => {
    const { status, body } = await getJson(url(params as Record<string, string>));
    expect(status).toBe(400);
    expect(body).toEqual({ error: expect.any(String), errorCode });
  });

  it('a mint without any market has no route and no price', async () => {
    const payer = await funded(1);
    const lonely = (await createMint(connection, payer, payer.publicKey, null, 6)).toBase58();
    const { status, body } = await getJson(url({ inputMint: SOL, outputMint: lonely, amount: '1000' }));
    expect({ status, body }).toEqual({ status: 400, body: { error: 'Could not find any route', errorCode: 'COULD_NOT_FIND_ANY_ROUTE' } });
    expect((await getJson(`${net.rpcUrl}/price/v3?ids=${lonely}`)).body).toEqual({});
  });

  it('answers garbage swap bodies with 400 and wrong methods with 405', async () => {
    const user = Keypair.generate().publicKey.toBase58();
    const good = await quote(net.rpcUrl, { inputMint: SOL, outputMint: USD, amount: 1_000_000, slippageBps: 50 });
    const cases: [unknown, string][] = [
      ['not json', 'INVALID_REQUEST'],
      [{ userPublicKey: user }, 'INVALID_REQUEST'],
      [{ quoteResponse: good }, 'INVALID_REQUEST'],
      [{ quoteResponse: { ...good, inAmount: '-5' }, userPublicKey: user }, 'INVALID_REQUEST'],
      [{ quoteResponse: good, userPublicKey: user, wrapAndUnwrapSol: false }, 'NOT_SUPPORTED'],
      [{ quoteResponse: { ...good, routePlan: [{ swapInfo: { ...good.routePlan[0].swapInfo, ammKey: user } }] }, userPublicKey: user }, 'MARKET_NOT_FOUND'],
    ];
    for (const [body, errorCode] of cases) {
      const reply = await postJson(`${net.rpcUrl}/swap/v1/swap`, body);
      expect({ status: reply.status, errorCode: reply.body.errorCode }).toEqual({ status: 400, errorCode });
    }
    const wrongMethod = await fetch(`${net.rpcUrl}/swap/v1/swap`);
    expect(wrongMethod.status).toBe(405);
  });

  it('builds an unsigned v0 transaction paid by the user', async () => {
    const user = Keypair.generate().publicKey;
    const good: Quote = await quote(net.rpcUrl, { inputMint: SOL, outputMint: USD, amount: 1_000_000, slippageBps: 50 });
    const { status, body } = await postJson(`${net.rpcUrl}/swap/v1/swap`, { quoteResponse: good, userPublicKey: user.toBase58(), wrapAndUnwrapSol: true });
    expect(status).toBe(200);
    expect(body).toMatchObject({ lastValidBlockHeight: expect.any(Number), prioritizationFeeLamports: 0 });
    const tx = VersionedTransaction.deserialize(Buffer.from(body.swapTransaction, 'base64'));
    expect(tx.version).toBe(0);
    expect(tx.message.staticAccountKeys[0]!.equals(user)).toBe(true);
    expect(tx.signatures.every((s) => s.every((b) => b === 0))).toBe(true);

    const legacy = await postJson(`${net.rpcUrl}/swap/v1/swap`, { quoteResponse: good, userPublicKey: user.toBase58(), asLegacyTransaction: true });
    expect(VersionedTransaction.deserialize(Buffer.from(legacy.body.swapTransaction, 'base64')).version).toBe('legacy');
  });
});

describe('Jupiter swap API over pump coins', () => {
  let creator: Keypair;
  beforeAll(async () => {
    creator = await funded(10);
  });

  it('routes a coin on its bonding curve to the curve, both ways, moving exactly the quoted amounts', async () => {
    const mint = await createCoin(creator, 'CURVE');
    const trader = await funded(5);
    const buy = await quote(net.rpcUrl, { inputMint: SOL, outputMint: mint.toBase58(), amount: LAMPORTS_PER_SOL / 2, slippageBps: 100 });
    expect(buy.routePlan[0]!.swapInfo).toMatchObject({ label: 'Pump.fun', ammKey: bondingCurvePda(mint).toBase58(), feeMint: SOL });
    expect(BigInt(buy.routePlan[0]!.swapInfo.feeAmount!)).toBeGreaterThan(0n);
    const bought = await executeSwap(net.rpcUrl, connection, trader, buy);
    expect(await tokenBalance(mint, trader.publicKey, TOKEN_2022_PROGRAM_ID)).toBe(BigInt(buy.outAmount));
    expectBudgetSpent(bought.solSpent - bought.rentPaid - bought.fee, buy);

    const sell = await quote(net.rpcUrl, { inputMint: mint.toBase58(), outputMint: SOL, amount: BigInt(buy.outAmount), slippageBps: 100 });
    expect(sell.routePlan[0]!.swapInfo).toMatchObject({ label: 'Pump.fun', ammKey: bondingCurvePda(mint).toBase58() });
    const sold = await executeSwap(net.rpcUrl, connection, trader, sell);
    expect(await tokenBalance(mint, trader.publicKey, TOKEN_2022_PROGRAM_ID)).toBe(0n);
    expect(-(sold.solSpent - sold.rentPaid - sold.fee)).toBe(BigInt(sell.outAmount));
  });

  it('prices a curve coin from its virtual reserves', async () => {
    const mint = await createCoin(creator, 'PRICE');
    const curve = await new OnlinePumpSdk(connection).fetchBondingCurve(mint);
    const { body } = await getJson(`${net.rpcUrl}/price/v3?ids=${mint.toBase58()}`);
    const expected = (Number(curve.virtualQuoteReserves.toString()) / Number(curve.virtualTokenReserves.toString())) * 1e-3 * 150;
    expect(body[mint.toBase58()].decimals).toBe(6);
    expect(body[mint.toBase58()].usdPrice).toBeCloseTo(expected, 15);
  });

  it('refuses a buy larger than what is left on the curve', async () => {
    const mint = await createCoin(creator, 'BIG');
    const { status, body } = await getJson(`${net.rpcUrl}/swap/v1/quote?inputMint=${SOL}&outputMint=${mint.toBase58()}&amount=${1_000 * LAMPORTS_PER_SOL}`);
    expect(status).toBe(400);
    expect(body.errorCode).toBe('ROUTE_PLAN_DOES_NOT_CONSUME_ALL_THE_AMOUNT');
  });

  it('routes a graduated coin to its canonical PumpSwap pool', async () => {
    const mint = await createCoin(creator, 'GRADS');
    const whale = await funded(200);
    const sdk = new OnlinePumpSdk(connection);
    const [global, feeConfig, state] = await Promise.all([sdk.fetchGlobal(), sdk.fetchFeeConfig(), sdk.fetchBuyState(mint, whale.publicKey, TOKEN_2022_PROGRAM_ID)]);
    const rest = state.bondingCurve.realTokenReserves;
    const mintSupply = new BN((await connection.getTokenSupply(mint)).value.amount);
    const cost = getBuySolAmountFromTokenAmount({ global, feeConfig, mintSupply, bondingCurve: state.bondingCurve, amount: rest, quoteMint: NATIVE_MINT });
    await send(await PUMP_SDK.buyInstructions({ global, ...state, mint, user: whale.publicKey, amount: rest, solAmount: cost, slippage: 1, tokenProgram: TOKEN_2022_PROGRAM_ID }), [whale]);
    // The localnet's graduation keeper migrates the complete curve, as pump's migrator does on mainnet.
    await net.keeper!.whenMigrated(mint);

    const trader = await funded(5);
    const buy = await quote(net.rpcUrl, { inputMint: SOL, outputMint: mint.toBase58(), amount: LAMPORTS_PER_SOL, slippageBps: 50 });
    expect(buy.routePlan[0]!.swapInfo).toMatchObject({ label: 'Pump.fun Amm', ammKey: canonicalPumpPoolPda(mint).toBase58() });
    const bought = await executeSwap(net.rpcUrl, connection, trader, buy);
    expect(await tokenBalance(mint, trader.publicKey, TOKEN_2022_PROGRAM_ID)).toBe(BigInt(buy.outAmount));
    expectBudgetSpent(bought.solSpent - bought.rentPaid - bought.fee, buy);

    const sell = await quote(net.rpcUrl, { inputMint: mint.toBase58(), outputMint: SOL, amount: BigInt(buy.outAmount), slippageBps: 50 });
    expect(sell.routePlan[0]!.swapInfo.label).toBe('Pump.fun Amm');
    const sold = await executeSwap(net.rpcUrl, connection, trader, sell);
    expect(await tokenBalance(mint, trader.publicKey, TOKEN_2022_PROGRAM_ID)).toBe(0n);
    expect(-(sold.solSpent - sold.rentPaid - sold.fee)).toBe(BigInt(sell.outAmount));

    const { body } = await getJson(`${net.rpcUrl}/price/v3?ids=${mint.toBase58()}`);
    expect(body[mint.toBase58()].usdPrice).toBeGreaterThan(0);
  });
});
