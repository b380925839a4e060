import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, VersionedTransaction, type Connection, type TransactionInstruction, TransactionMessage } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID, createAssociatedTokenAccountIdempotent, createMint, mintTo } from '@solana/spl-token';
import { PUMP_SDK } from '@pump-fun/pump-sdk';
import { SolanaChain, WRAPPED_SOL_MINT, recentBlockhash, sendAndConfirm, signTransaction } from '@svc/chain';
import { bodyValidator, walletResponse } from '@svc/contracts';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { LOCAL_USD_MINT } from '../../apps/localnet/src/jupiter';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { airdrop, registerCitizen } from '../support/citizens';
import { call } from '../support/http';
import { freePort } from '../support/ports';

interface Citizen {
  handle: string;
  key: string;
  wallet: string;
  keypair: Keypair;
}

const CONFIRMED = { commitment: 'confirmed' } as const;

describe('GET /api/v1/wallet: the citizen’s SOL and tokens as the chain holds them, priced', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let base: string;
  let rpcUrl: string;
  let connection: Connection;
  /** Pays for mints and token accounts the tests set up. */
  let bank: Keypair;

  beforeAll(async () => {
    db = await freshDatabase('wallet');
    server = await startEmbedded(
      testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('wallet'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }),
    );
    base = server.url;
    rpcUrl = server.solanaRpcUrl;
    connection = server.services.chain.connection;
    bank = Keypair.generate();
    await fund(bank.publicKey.toBase58(), 50);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const citizen = (prefix: string) => registerCitizen(base, prefix) as Promise<Citizen>;
  const fund = (wallet: string, sol: number) => airdrop(connection, wallet, sol);

  async function send(instructions: TransactionInstruction[], signers: Keypair[]): Promise<void> {
    const recent = await recentBlockhash(connection);
    const message = new TransactionMessage({ payerKey: signers[0]!.publicKey, recentBlockhash: recent.blockhash, instructions }).compileToV0Message();
    await sendAndConfirm(connection, signTransaction(new VersionedTransaction(message), signers, recent));
  }

  /** A fresh mint (no market, so no price) with `raw` base units minted to the owner's associated account. */
  async function mintTokens(owner: string, programId: PublicKey, decimals: number, raw: bigint): Promise<string> {
    const mint = await createMint(connection, bank, bank.publicKey, null, decimals, Keypair.generate(), CONFIRMED, programId);
    const account = await createAssociatedTokenAccountIdempotent(connection, bank, mint, new PublicKey(owner), CONFIRMED, programId);
    if (raw > 0n) await mintTo(connection, bank, mint, account, bank, raw, [], CONFIRMED, programId);
    return mint.toBase58();
  }

  /** Buys `outputMint` with `lamports` of the citizen's SOL through the local chain's Jupiter-compatible swap API. */
  async function buy(who: Citizen, outputMint: string, lamports: number): Promise<void> {
    const query = new URLSearchParams({ inputMint: WRAPPED_SOL_MINT, outputMint, amount: String(lamports), slippageBps: '100' });
    const quoted = await fetch(`${rpcUrl}/swap/v1/quote?${query}`);
    expect(quoted.status).toBe(200);
    const swap = await fetch(`${rpcUrl}/swap/v1/swap`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ quoteResponse: await quoted.json(), userPublicKey: who.wallet, wrapAndUnwrapSol: true }),
    });
    expect(swap.status).toBe(200);
    const { swapTransaction, lastValidBlockHeight } = (await swap.json()) as { swapTransaction: string; lastValidBlockHeight: number };
    const tx = VersionedTransaction.deserialize(Buffer.from(swapTransaction, 'base64'));
    tx.sign([who.keypair]);
    const signature = await connection.sendRawTransaction(tx.serialize());
    const confirmed = await connection.confirmTransaction({ signature, blockhash: tx.message.recentBlockhash, lastValidBlockHeight }, 'confirmed');
    expect(confirmed.value.err).toBeNull();
  }

  /** A pump coin (a Token-2022 mint) on its bonding curve, which the local aggregator prices from the curve. */
  async function pumpCoin(symbol: string): Promise<string> {
    const mint = Keypair.generate();
    const create = await PUMP_SDK.createV2Instruction({
      mint: mint.publicKey,
      name: symbol,
      symbol,
      uri: `https://example.com/${symbol}.json`,
      creator: bank.publicKey,
      user: bank.publicKey,
      mayhemMode: false,
    });
    await send([create], [bank, mint]);
    return mint.publicKey.toBase58();
  }

  /** What the price API answers for these mints right now, USD per whole token (absent: no price). */
  async function pricesNow(mints: string[]): Promise<Record<string, { usdPrice: number } | undefined>> {
    const res = await fetch(`${rpcUrl}/price/v3?ids=${mints.join(',')}`);
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, { usdPrice: number }>;
  }

  /** Every token account of the wallet with a balance, as web3.js reads them, one call per token program. */
  async function tokenAccountsOnChain(wallet: string) {
    const found = [];
    for (const programId of [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID]) {
      const { value } = await connection.getParsedTokenAccountsByOwner(new PublicKey(wallet), { programId }, 'confirmed');
      for (const { pubkey, account } of value) {
        const { mint, tokenAmount } = account.data.parsed.info as { mint: string; tokenAmount: { amount: string; decimals: number; uiAmount: number } };
        found.push({ account: pubkey.toBase58(), mint, programId: programId.toBase58(), ...tokenAmount });
      }
    }
    return found;
  }

  it('lists SOL and every SPL Token and Token-2022 holding with its live price, and values the whole portfolio', async () => {
    const me = await citizen('holder');
    await fund(me.wallet, 5);
    // Priced: the local stablecoin (SPL Token, a PumpSwap pool) and a pump coin (Token-2022, its curve), both bought.
    await buy(me, LOCAL_USD_MINT.toBase58(), LAMPORTS_PER_SOL);
    const coin = await pumpCoin('WLT');
    await buy(me, coin, LAMPORTS_PER_SOL / 10);
    // Unpriced: fresh mints with no market. Empty: an account left with nothing in it.
    const plain = await mintTokens(me.wallet, TOKEN_PROGRAM_ID, 6, 123_456_789n);
    const t22 = await mintTokens(me.wallet, TOKEN_2022_PROGRAM_ID, 9, 42_000_000_001n);
    const emptied = await mintTokens(me.wallet, TOKEN_PROGRAM_ID, 2, 0n);

    const res = await call(base, 'GET', '/api/v1/wallet', { key: me.key });

    expect(res.status).toBe(200);
    expect(bodyValidator(walletResponse)(res.body)).toBeNull();
    const lamports = await connection.getBalance(new PublicKey(me.wallet), 'confirmed');
    const onChain = (await tokenAccountsOnChain(me.wallet)).filter((a) => a.amount !== '0');
    expect(onChain.map((a) => a.mint).sort()).toEqual([LOCAL_USD_MINT.toBase58(), coin, plain, t22].sort());
    const prices = await pricesNow([WRAPPED_SOL_MINT, ...onChain.map((a) => a.mint)]);
    expect(prices[WRAPPED_SOL_MINT]!.usdPrice).toBe(150);
    expect(prices[LOCAL_USD_MINT.toBase58()]!.usdPrice).toBeCloseTo(1, 2);
    expect(prices[coin]!.usdPrice).toBeGreaterThan(0);
    expect(prices[plain]).toBeUndefined();
    expect(prices[t22]).toBeUndefined();

    const expected = onChain.map((a) => {
      const price = prices[a.mint]?.usdPrice ?? null;
      return {
        mint: a.mint,
        ui_amount: a.uiAmount,
        price_usd: price,
        value_usd: price === null ? null : a.uiAmount * price,
        amount: a.amount,
        decimals: a.decimals,
        account: a.account,
        token_program: a.programId,
      };
    });
    const { holdings, ...rest } = res.body;
    expect(rest).toEqual({
      ok: true,
      wallet: me.wallet,
      sol: lamports / 1e9,
      sol_price_usd: 150,
      sol_usd: (lamports / 1e9) * 150,
      portfolio_usd: expect.any(Number),
    });
    expect([...holdings].sort((a: { mint: string }, b: { mint: string }) => (a.mint < b.mint ? -1 : 1))).toEqual(
      expected.sort((a, b) => (a.mint < b.mint ? -1 : 1)),
    );
    // Most valuable first, the unpriced last; the empty account is not a holding.
    const values = holdings.map((h: { value_usd: number | null }) => h.value_usd);
    expect(values.slice(0, 2)).toEqual([...values.slice(0, 2)].sort((a, b) => b - a));
    expect(values.slice(2)).toEqual([null, null]);
    expect(holdings.map((h: { mint: string }) => h.mint)).not.toContain(emptied);
    expect(holdings.find((h: { mint: string }) => h.mint === t22)).toMatchObject({ ui_amount: 42.000000001, amount: '42000000001', token_program: TOKEN_2022_PROGRAM_ID.toBase58() });
    expect(holdings.find((h: { mint: string }) => h.mint === coin).token_program).toBe(TOKEN_2022_PROGRAM_ID.toBase58());
    const priced = expected.reduce((sum, h) => sum + (h.value_usd ?? 0), 0);
    expect(res.body.portfolio_usd).toBeCloseTo((lamports / 1e9) * 150 + priced, 9);
    expect(res.body.portfolio_usd).toBeGreaterThan(res.body.sol_usd + 140);
  }, 60_000);

  it('shows a wallet with nothing in it as zeros, not nulls', async () => {
    const me = await citizen('empty');
    const res = await call(base, 'GET', '/api/v1/wallet', { key: me.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, wallet: me.wallet, sol: 0, sol_usd: 0, sol_price_usd: 150, holdings: [], portfolio_usd: 0 });
  });

  it('follows the chain: tokens that arrive show up on the next read', async () => {
    const me = await citizen('arrivals');
    expect((await call(base, 'GET', '/api/v1/wallet', { key: me.key })).body.holdings).toEqual([]);
    const mint = await mintTokens(me.wallet, TOKEN_2022_PROGRAM_ID, 0, 7n);
    const res = await call(base, 'GET', '/api/v1/wallet', { key: me.key });
    expect(res.body.holdings).toEqual([expect.objectContaining({ mint, ui_amount: 7, amount: '7', decimals: 0, price_usd: null, value_usd: null })]);
  });

  it('answers 401 without a key or with an unknown one', async () => {
    for (const key of [undefined, 'svc_sk_nottherightkey']) {
      const res = await call(base, 'GET', '/api/v1/wallet', { key });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    }
  });

  it('answers 503 unavailable with Retry-After, not 500, when the Solana RPC cannot be reached or is failing', async () => {
    const me = await citizen('offline');
    const down = http.createServer((_req, res) => res.writeHead(503).end('no healthy upstream'));
    await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
    const closedPort = await freePort();
    const reachable = server.services.chain;
    try {
      for (const rpc of [`http://127.0.0.1:${(down.address() as AddressInfo).port}`, `http://127.0.0.1:${closedPort}`]) {
        server.services.chain = new SolanaChain({ rpcUrl: rpc });
        const res = await call(base, 'GET', '/api/v1/wallet', { key: me.key });
        await server.services.chain.close();
        expect(res.status).toBe(503);
        expect(res.body).toMatchObject({ ok: false, error: { code: 'unavailable', message: expect.stringMatching(/Solana RPC/) } });
        expect(res.headers.get('retry-after')).toBe('5');
      }
    } finally {
      server.services.chain = reachable;
      await new Promise((resolve) => down.close(resolve));
    }
    expect((await call(base, 'GET', '/api/v1/wallet', { key: me.key })).status).toBe(200);
  });

  it('is described in the OpenAPI document, with what a null price means', async () => {
    const openapi = (await call(base, 'GET', '/openapi.json')).body;
    const operation = openapi.paths['/api/v1/wallet'].get;
    expect(operation.responses['200'].content['application/json'].schema.required).toEqual(
      expect.arrayContaining(['wallet', 'sol', 'sol_usd', 'holdings', 'portfolio_usd']),
    );
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['401', '503']));
    expect(operation.description).toMatch(/price_usd` and `value_usd` null/);
    expect(operation.description).toMatch(/empty token accounts .* are not listed/);
  });
});
