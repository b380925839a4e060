import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction, TransactionInstruction, VersionedTransaction, sendAndConfirmTransaction } from '@solana/web3.js';
import { NATIVE_MINT, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID, getAssociatedTokenAddressSync } from '@solana/spl-token';
import BN from 'bn.js';
import { OnlinePumpSdk, PUMP_SDK, bondingCurvePda, canonicalPumpPoolPda, getBuySolAmountFromTokenAmount } from '@pump-fun/pump-sdk';
import { emulatedPrograms } from '../../apps/localnet/src/programs';
import { LOCAL_USD_MINT, jupiterRoutes, stablecoinSeed } from '../../apps/localnet/src/jupiter';
import { localnet, type LocalnetClient } from '../support/localnet';

/**
 * Coin-to-coin swaps through the localnet's Jupiter-compatible API: neither mint is SOL and no pool holds both, so the
 * route goes through SOL in two hops, each on the venue that holds its coin (bonding curve or PumpSwap pool). The
 * quote is asked, built, signed and sent over HTTP and JSON-RPC like any Jupiter client does it.
 */

type SwapInfo = { ammKey: string; label: string; inputMint: string; outputMint: string; inAmount: string; outAmount: string; feeAmount: string; feeMint: string };
type Quote = {
  inputMint: string;
  inAmount: string;
  outputMint: string;
  outAmount: string;
  otherAmountThreshold: string;
  slippageBps: number;
  priceImpactPct: string;
  routePlan: { swapInfo: SwapInfo; percent: number; bps: number }[];
  [field: string]: unknown;
};

const SOL = NATIVE_MINT.toBase58();

let t: LocalnetClient;
let connection: Connection;
let rpcUrl: string;

beforeAll(async () => {
  t = await localnet({ programs: emulatedPrograms(), seeds: [stablecoinSeed({ solUsd: 150 })], routes: [jupiterRoutes({ solUsd: 150 })] });
  connection = t.connection;
  rpcUrl = t.net.rpcUrl;
});
afterAll(() => t.close());

async function getJson(url: string): Promise<{ status: number; body: any }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.json() };
}

async function quote(params: { inputMint: PublicKey; outputMint: PublicKey; amount: bigint; slippageBps: number }): Promise<Quote> {
  const query = new URLSearchParams({ inputMint: params.inputMint.toBase58(), outputMint: params.outputMint.toBase58(), amount: String(params.amount), slippageBps: String(params.slippageBps) });
  const { status, body } = await getJson(`${rpcUrl}/swap/v1/quote?${query}`);
  if (status !== 200) throw new Error(`quote failed: ${JSON.stringify(body)}`);
  return body;
}

/** Asks for the swap transaction, signs it as the user and sends it; resolves with the landed signature and the transaction. */
async function executeSwap(user: Keypair, quoted: Quote): Promise<{ signature: string; tx: VersionedTransaction }> {
  const response = await fetch(`${rpcUrl}/swap/v1/swap`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ quoteResponse: quoted, userPublicKey: user.publicKey.toBase58() }),
  });
  const body: any = await response.json();
  if (response.status !== 200) throw new Error(`swap failed: ${JSON.stringify(body)}`);
  const tx = VersionedTransaction.deserialize(Buffer.from(body.swapTransaction, 'base64'));
  tx.sign([user]);
  const signature = await connection.sendRawTransaction(tx.serialize());
  const confirmed = await connection.confirmTransaction({ signature, blockhash: tx.message.recentBlockhash, lastValidBlockHeight: body.lastValidBlockHeight });
  if (confirmed.value.err) throw new Error(`swap transaction failed: ${JSON.stringify(confirmed.value.err)}`);
  return { signature, tx };
}

async function tokens(mint: PublicKey, owner: PublicKey): Promise<bigint> {
  const program = (await connection.getAccountInfo(mint))!.owner;
  const account = await connection.getTokenAccountBalance(getAssociatedTokenAddressSync(mint, owner, true, program)).catch(() => null);
  return BigInt(account?.value.amount ?? 0);
}

/** What a landed transaction took from its fee payer besides the swap: the fee and the rent of every account it opened. */
async function overhead(signature: string): Promise<bigint> {
  const tx = (await connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 }))!;
  const keys = [...tx.transaction.message.staticAccountKeys, ...(tx.meta!.loadedAddresses?.writable ?? []), ...(tx.meta!.loadedAddresses?.readonly ?? [])];
  let rent = 0n;
  for (const [i, pre] of tx.meta!.preBalances.entries()) {
    if (i === 0 || pre !== 0 || tx.meta!.postBalances[i] === 0) continue;
    const created = await connection.getAccountInfo(keys[i]!);
    rent += BigInt(await connection.getMinimumBalanceForRentExemption(created?.data.length ?? 0));
  }
  return BigInt(tx.meta!.fee) + rent;
}

async function send(instructions: TransactionInstruction[], signers: Keypair[]): Promise<string> {
  return sendAndConfirmTransaction(connection, new Transaction().add(...instructions), signers, { commitment: 'confirmed' });
}

async function createCoin(creator: Keypair, symbol: string): Promise<PublicKey> {
  const mint = Keypair.generate();
  const create = await PUMP_SDK.createV2Instruction({ mint: mint.publicKey, name: symbol, symbol, uri: `https://example.com/${symbol}.json`, creator: creator.publicKey, user: creator.publicKey, mayhemMode: false });
  await send([create], [creator, mint]);
  return mint.publicKey;
}

/** A coin whose curve a whale bought out; the localnet's keeper has migrated it into its PumpSwap pool. */
async function graduatedCoin(creator: Keypair, symbol: string, whale: Keypair): Promise<PublicKey> {
  const mint = await createCoin(creator, symbol);
  const sdk = new OnlinePumpSdk(connection);
  const [global, feeConfig, state] = await Promise.all([sdk.fetchGlobal(), sdk.fetchFeeConfig(), sdk.fetchBuyState(mint, whale.publicKey, TOKEN_2022_PROGRAM_ID)]);
  const rest = state.bondingCurve.realTokenReserves;
  const mintSupply = new BN((await connection.getTokenSupply(mint)).value.amount);
  const cost = getBuySolAmountFromTokenAmount({ global, feeConfig, mintSupply, bondingCurve: state.bondingCurve, amount: rest, quoteMint: NATIVE_MINT });
  await send(await PUMP_SDK.buyInstructions({ global, ...state, mint, user: whale.publicKey, amount: rest, solAmount: cost, slippage: 0, tokenProgram: TOKEN_2022_PROGRAM_ID }), [whale]);
  await t.net.keeper!.whenMigrated(mint);
  return mint;
}

/** Buys `sol` worth of `mint` through the API itself (SOL → coin, one hop), so the user holds some to swap. */
async function acquire(user: Keypair, mint: PublicKey, sol: number): Promise<bigint> {
  await executeSwap(user, await quote({ inputMint: NATIVE_MINT, outputMint: mint, amount: BigInt(sol * LAMPORTS_PER_SOL), slippageBps: 100 }));
  return tokens(mint, user.publicKey);
}

/**
 * Swaps all of the user's `from` into `to` at the quote and checks what moved: exactly the input left, exactly the
 * quoted output arrived (nothing traded in between), and SOL moved only by the fee, the rent of opened accounts and
 * the few lamports an exact-input buy cannot spend.
 */
async function swapsExactly(user: Keypair, from: PublicKey, to: PublicKey, labels: [string, string]): Promise<Quote> {
  const amount = await tokens(from, user.publicKey);
  const q = await quote({ inputMint: from, outputMint: to, amount, slippageBps: 100 });
  expect(q.routePlan.map((step) => step.swapInfo.label)).toEqual(labels);
  const sol = BigInt(await connection.getBalance(user.publicKey));
  const held = await tokens(to, user.publicKey);

  const { signature, tx } = await executeSwap(user, q);

  // Both legs fit one versioned transaction by looking up the addresses every market shares.
  expect(tx.version).toBe(0);
  expect(tx.message.addressTableLookups).toHaveLength(1);
  expect(await tokens(from, user.publicKey)).toBe(0n);
  expect((await tokens(to, user.publicKey)) - held).toBe(BigInt(q.outAmount));
  const solMoved = BigInt(await connection.getBalance(user.publicKey)) - sol + (await overhead(signature));
  expect(solMoved).toBeGreaterThanOrEqual(0n);
  expect(solMoved).toBeLessThanOrEqual(4n);
  return q;
}

describe('two-hop routes through SOL', () => {
  let creator: Keypair;
  let whale: Keypair;
  beforeAll(async () => {
    [creator, whale] = await Promise.all([t.funded(20), t.funded(800)]);
  });

  test('curve coin → curve coin: a 2-step plan through SOL, slippage once on the output, both legs in one transaction', async () => {
    const [a, b] = [await createCoin(creator, 'AAA'), await createCoin(creator, 'BBB')];
    const user = await t.funded(5);
    await acquire(user, a, 1);
    const amount = await tokens(a, user.publicKey);

    const q = await quote({ inputMint: a, outputMint: b, amount, slippageBps: 250 });

    expect(q).toMatchObject({ inputMint: a.toBase58(), outputMint: b.toBase58(), inAmount: String(amount), swapMode: 'ExactIn', slippageBps: 250 });
    expect(q.routePlan).toHaveLength(2);
    const [first, second] = q.routePlan;
    expect(first).toMatchObject({ percent: 100, bps: 10_000, swapInfo: { label: 'Pump.fun', ammKey: bondingCurvePda(a).toBase58(), inputMint: a.toBase58(), outputMint: SOL, inAmount: String(amount), feeMint: SOL } });
    expect(second).toMatchObject({ percent: 100, bps: 10_000, swapInfo: { label: 'Pump.fun', ammKey: bondingCurvePda(b).toBase58(), inputMint: SOL, outputMint: b.toBase58(), feeMint: SOL } });
    expect(second!.swapInfo.inAmount).toBe(first!.swapInfo.outAmount);
    expect(second!.swapInfo.outAmount).toBe(q.outAmount);
    expect(BigInt(q.otherAmountThreshold)).toBe((BigInt(q.outAmount) * 9_750n) / 10_000n);
    // Each leg loses some output to its curve's shape; the route loses what both do.
    const direct = [await quote({ inputMint: a, outputMint: NATIVE_MINT, amount, slippageBps: 0 }), await quote({ inputMint: NATIVE_MINT, outputMint: b, amount: BigInt(first!.swapInfo.outAmount), slippageBps: 0 })];
    expect(direct[0]!.outAmount).toBe(first!.swapInfo.outAmount);
    expect(direct[1]!.outAmount).toBe(q.outAmount);
    const compounded = 1 - (1 - Number(direct[0]!.priceImpactPct)) * (1 - Number(direct[1]!.priceImpactPct));
    expect(Number(q.priceImpactPct)).toBeCloseTo(compounded, 12);
    expect(Number(q.priceImpactPct)).toBeGreaterThan(Number(direct[1]!.priceImpactPct));

    // The user has no account for B yet: the swap opens it.
    expect(await connection.getAccountInfo(getAssociatedTokenAddressSync(b, user.publicKey, false, TOKEN_2022_PROGRAM_ID))).toBeNull();
    await swapsExactly(user, a, b, ['Pump.fun', 'Pump.fun']);
  }, 60_000);

  test('graduated coin → curve coin and back, the PumpSwap pool as one leg and the bonding curve as the other', async () => {
    const pooled = await graduatedCoin(creator, 'POOL', whale);
    const curved = await createCoin(creator, 'CURV');
    const user = await t.funded(5);
    await acquire(user, pooled, 1);

    const out = await swapsExactly(user, pooled, curved, ['Pump.fun Amm', 'Pump.fun']);
    expect(out.routePlan[0]!.swapInfo.ammKey).toBe(canonicalPumpPoolPda(pooled).toBase58());
    const back = await swapsExactly(user, curved, pooled, ['Pump.fun', 'Pump.fun Amm']);
    expect(back.routePlan[1]!.swapInfo.ammKey).toBe(canonicalPumpPoolPda(pooled).toBase58());

    // Into the pool's Token-2022 coin for a user who has never held it: the swap opens the account.
    const newcomer = await t.funded(5);
    await acquire(newcomer, curved, 1);
    expect(await connection.getAccountInfo(getAssociatedTokenAddressSync(pooled, newcomer.publicKey, false, TOKEN_2022_PROGRAM_ID))).toBeNull();
    await swapsExactly(newcomer, curved, pooled, ['Pump.fun', 'Pump.fun Amm']);
  }, 60_000);

  test('pool → pool: a graduated coin into the SPL stablecoin, both legs on PumpSwap', async () => {
    const pooled = await graduatedCoin(creator, 'PLPL', whale);
    const user = await t.funded(5);
    await acquire(user, pooled, 1);

    // Without a lookup table two PumpSwap legs name too many accounts for one transaction.
    const asked = await quote({ inputMint: pooled, outputMint: LOCAL_USD_MINT, amount: await tokens(pooled, user.publicKey), slippageBps: 100 });
    const legacy = await fetch(`${rpcUrl}/swap/v1/swap`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ quoteResponse: asked, userPublicKey: user.publicKey.toBase58(), asLegacyTransaction: true }) });
    expect({ status: legacy.status, errorCode: ((await legacy.json()) as { errorCode: string }).errorCode }).toEqual({ status: 400, errorCode: 'NOT_SUPPORTED' });

    const q = await swapsExactly(user, pooled, LOCAL_USD_MINT, ['Pump.fun Amm', 'Pump.fun Amm']);
    expect((await connection.getAccountInfo(getAssociatedTokenAddressSync(LOCAL_USD_MINT, user.publicKey)))!.owner.equals(TOKEN_PROGRAM_ID)).toBe(true);
    expect(BigInt(q.outAmount)).toBeGreaterThan(0n);
  }, 60_000);

  test('when the first leg\'s price falls after the quote, the swap is refused on-chain and nothing moves', async () => {
    const [a, b] = [await createCoin(creator, 'FALL'), await createCoin(creator, 'STAY')];
    const [user, seller] = [await t.funded(5), await t.funded(5)];
    await acquire(user, a, 1);
    await acquire(seller, a, 1);
    const amount = await tokens(a, user.publicKey);
    const stale = await quote({ inputMint: a, outputMint: b, amount, slippageBps: 5_000 });
    // Another holder sells first: the curve now pays less SOL for A than the quote planned to spend on B.
    await executeSwap(seller, await quote({ inputMint: a, outputMint: NATIVE_MINT, amount: await tokens(a, seller.publicKey), slippageBps: 100 }));
    const sol = await connection.getBalance(user.publicKey);

    await expect(executeSwap(user, stale)).rejects.toThrow(/TooLittleSolReceived|custom program error: 0x1773/);

    expect(await tokens(a, user.publicKey)).toBe(amount);
    expect(await tokens(b, user.publicKey)).toBe(0n);
    expect(await connection.getBalance(user.publicKey)).toBe(sol);
  }, 60_000);

  test('a coin without any market has no route, and a route plan that does not chain is refused', async () => {
    const a = await createCoin(creator, 'LONE');
    const unknown = Keypair.generate().publicKey;
    const { status, body } = await getJson(`${rpcUrl}/swap/v1/quote?inputMint=${a.toBase58()}&outputMint=${unknown.toBase58()}&amount=1000`);
    expect({ status, errorCode: body.errorCode }).toEqual({ status: 400, errorCode: 'TOKEN_NOT_TRADABLE' });

    const b = await createCoin(creator, 'PAIR');
    const user = await t.funded(2);
    await acquire(user, a, 0.1);
    const good = await quote({ inputMint: a, outputMint: b, amount: await tokens(a, user.publicKey), slippageBps: 50 });
    const broken = { ...good, routePlan: [good.routePlan[0], { ...good.routePlan[1], swapInfo: { ...good.routePlan[1]!.swapInfo, inAmount: '1' } }] };
    const reply = await fetch(`${rpcUrl}/swap/v1/swap`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ quoteResponse: broken, userPublicKey: user.publicKey.toBase58() }) });
    expect(reply.status).toBe(400);
    expect(((await reply.json()) as { errorCode: string }).errorCode).toBe('INVALID_REQUEST');
  }, 60_000);
});
