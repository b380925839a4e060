import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PublicKey, SystemProgram, Transaction, VersionedTransaction, sendAndConfirmTransaction, type Connection } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID } from '@solana/spl-token';
import { OnlinePumpSdk, PUMP_SDK, canonicalPumpPoolPda } from '@pump-fun/pump-sdk';
import { PUMP_AMM_PROGRAM_ID } from '@pump-fun/pump-swap-sdk';
import type { RunningApi } from '../../apps/api/src/server';
import type { RunningServer } from '../../scripts/embedded';
import { airdrop, registerCitizen, type TestCitizen } from '../support/citizens';
import { call } from '../support/http';
import { fundedKeypair } from '../support/localnet';
import { checkedFetch } from '../support/openapi';
import { embeddedService, startSecondApi, type EmbeddedService } from '../support/servers';

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/**
 * A coin between its bonding curve and its PumpSwap pool, held there by a chain without the graduation keeper: its
 * intel says pump, complete, graduating; a trade waits for the pool and trades on it once the test sends `migrate`,
 * and an API whose GRADUATION_WAIT_MS passes first answers 503 graduating (HTTP and MCP alike), never the aggregator.
 */
describe('graduating coins: between the curve and the pool', () => {
  let service: EmbeddedService;
  let server: RunningServer;
  /** A second API on the same database and chain that waits 300 ms for a pool. */
  let impatient: RunningApi;
  let base: string;
  let holder: TestCitizen;
  let mint: string;

  beforeAll(async () => {
    // Long enough that the test's own `migrate` lands within it on a busy machine.
    service = await embeddedService('graduating', { GRADUATION_WAIT_MS: '20000' }, { graduationKeeper: false });
    server = service.server;
    base = server.url;
    impatient = await startSecondApi(server, { GRADUATION_WAIT_MS: '300' });
  }, 60_000);
  afterAll(async () => {
    await impatient?.close();
    await service?.close();
  });

  const connection = (): Connection => server.services.chain.connection;
  async function citizen(prefix: string, sol: number): Promise<TestCitizen> {
    const made = await registerCitizen(base, prefix);
    await airdrop(connection(), made.wallet, sol);
    return made;
  }
  const post = (at: string, who: TestCitizen, path: string, body: Record<string, unknown>) => call(at, 'POST', path, { key: who.key, body });
  const signaturesOf = async (wallet: string) => (await connection().getSignaturesForAddress(new PublicKey(wallet), {}, 'confirmed')).length;

  /** `migrate`, sent by a wallet of the test's own, as pump's migrator would. */
  async function migrate(coin: string): Promise<string> {
    const [global, migrator] = await Promise.all([new OnlinePumpSdk(connection()).fetchGlobal(), fundedKeypair(connection(), 5)]);
    const instruction = await PUMP_SDK.migrateInstruction({ withdrawAuthority: global.withdrawAuthority, mint: new PublicKey(coin), user: migrator.publicKey, tokenProgram: TOKEN_2022_PROGRAM_ID });
    return sendAndConfirmTransaction(connection(), new Transaction().add(instruction), [migrator], { commitment: 'confirmed' });
  }

  /** Resolves once `count` trades have started waiting for `coin`'s pool in the main API. */
  function waitersFor(coin: string, count: number): Promise<void> {
    const pools = server.services.chain.pools;
    return new Promise((resolve) => {
      let seen = 0;
      const onWaiting = (waiting: string) => {
        if (waiting !== coin || ++seen < count) return;
        pools.off('waiting', onWaiting);
        resolve();
      };
      pools.on('waiting', onWaiting);
    });
  }

  it('a bought-out curve whose pool does not exist yet: venue pump, complete, status graduating, on the page and in the list', async () => {
    const creator = await citizen('gdev', 3);
    const deployed = await post(base, creator, '/api/v1/tokens/deploy', { name: 'Graduating', symbol: 'GRAD', image: PNG, fee_share: false });
    expect(deployed.status).toBe(201);
    mint = deployed.body.mint;
    holder = await citizen('ghold', 3);
    expect((await post(base, holder, '/api/v1/tokens/buy', { mint, amount_sol: 0.5 })).body).toMatchObject({ venue: 'pump', executed: true });
    expect((await call(base, 'GET', `/api/v1/tokens/${mint}`)).body).toMatchObject({ venue: 'pump', complete: false, status: 'bonding' });

    const whale = await citizen('gwhale', 200);
    const out = await post(base, whale, '/api/v1/tokens/buy', { mint, amount_sol: 120, slippage_bps: 5000 });
    expect(out.body).toMatchObject({ venue: 'pump', executed: true });
    expect((await new OnlinePumpSdk(connection()).fetchBondingCurve(new PublicKey(mint))).complete).toBe(true);
    expect(await connection().getAccountInfo(canonicalPumpPoolPda(new PublicKey(mint)), 'confirmed')).toBeNull();

    const page = await call(base, 'GET', `/api/v1/tokens/${mint}`);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ venue: 'pump', complete: true, status: 'graduating', progress: 1, pool: null, reserves: { source: 'bonding_curve' } });
    expect(page.body.price_sol).toBeGreaterThan(0);
    // Its curve takes no more trades and its pool is not there yet: no listing is where trades go now.
    expect(page.body.markets.filter((m: { active?: boolean }) => m.active)).toEqual([]);
    const list = await call(base, 'GET', '/api/v1/tokens');
    expect(list.body.tokens.find((t: { mint: string }) => t.mint === mint)).toMatchObject({ venue: 'pump', complete: true, status: 'graduating' });
  }, 60_000);

  it('lamports someone sent to a pool address before the pool exists make no pool: the coin is still graduating', async () => {
    const creator = await citizen('gdust', 1);
    const deployed = await post(base, creator, '/api/v1/tokens/deploy', { name: 'Dusted', symbol: 'DUST', image: PNG, fee_share: false });
    expect(deployed.status).toBe(201);
    const coin = deployed.body.mint as string;
    const whale = await citizen('gdwhale', 200);
    expect((await post(base, whale, '/api/v1/tokens/buy', { mint: coin, amount_sol: 120, slippage_bps: 5000 })).body).toMatchObject({ executed: true });
    // The pool's address is known before it exists: anyone can make a system account there.
    const duster = await fundedKeypair(connection(), 1);
    const pool = canonicalPumpPoolPda(new PublicKey(coin));
    await sendAndConfirmTransaction(connection(), new Transaction().add(SystemProgram.transfer({ fromPubkey: duster.publicKey, toPubkey: pool, lamports: 1_000_000 })), [duster], { commitment: 'confirmed' });
    expect((await connection().getAccountInfo(pool, 'confirmed'))?.owner.equals(SystemProgram.programId)).toBe(true);

    expect((await call(base, 'GET', `/api/v1/tokens/${coin}`)).body).toMatchObject({ venue: 'pump', complete: true, status: 'graduating', pool: null });
    const quote = await call(impatient.url, 'GET', `/api/v1/quote?mint=${coin}&side=buy&amount=0.1`);
    expect([quote.status, quote.body.error?.code]).toEqual([503, 'graduating']);
  }, 60_000);

  it('no pool within GRADUATION_WAIT_MS: buy, a self-custody build, sell and quote answer 503 graduating with Retry-After, and nothing is sent', async () => {
    const before = await signaturesOf(holder.wallet);
    const answers = {
      quote: await call(impatient.url, 'GET', `/api/v1/quote?mint=${mint}&side=buy&amount=0.1`),
      buy: await post(impatient.url, holder, '/api/v1/tokens/buy', { mint, amount_sol: 0.1 }),
      build: await post(impatient.url, holder, '/api/v1/tokens/buy', { mint, amount_sol: 0.1, execute: false }),
      sell: await post(impatient.url, holder, '/api/v1/tokens/sell', { mint, percent: 50 }),
      sellQuote: await call(impatient.url, 'GET', `/api/v1/quote?mint=${mint}&side=sell&amount=1000`),
    };
    for (const [name, reply] of Object.entries(answers)) {
      expect({ name, status: reply.status, code: reply.body.error?.code, retryAfter: reply.headers.get('retry-after') }).toEqual({ name, status: 503, code: 'graduating', retryAfter: '1' });
      expect(reply.body.error).toMatchObject({ mint, pool: canonicalPumpPoolPda(new PublicKey(mint)).toBase58(), message: expect.stringContaining('300 ms') });
      expect(reply.body.error.message).not.toMatch(/aggregator/);
    }
    // A swap has no pool to wait for: the aggregator has no route, and the answer says why.
    const swap = await post(impatient.url, holder, '/api/v1/swap', { input_mint: 'So11111111111111111111111111111111111111112', output_mint: mint, amount: 0.1 });
    expect([swap.status, swap.body.error?.code, swap.body.error?.mint, swap.headers.get('retry-after')]).toEqual([503, 'graduating', mint, '1']);
    expect(await signaturesOf(holder.wallet)).toBe(before);

    // The MCP tools are the routes: the same refusal, through the official client.
    const client = new Client({ name: 'graduating-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${impatient.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${holder.key}` } }, fetch: (url, init) => checkedFetch(String(url), init) }),
    );
    try {
      const result = (await client.callTool({ name: 'svc_buy', arguments: { mint, amount_sol: 0.1 } })) as { isError?: boolean; structuredContent?: any };
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ ok: false, error: { code: 'graduating', mint } });
    } finally {
      await client.close();
    }
  }, 60_000);

  it('a buy and a self-custody build issued while graduating wait for the pool, and trade on it once `migrate` lands', async () => {
    const pool = canonicalPumpPoolPda(new PublicKey(mint));
    const waiting = waitersFor(mint, 2);
    const buying = post(base, holder, '/api/v1/tokens/buy', { mint, amount_sol: 0.5 });
    const building = post(base, holder, '/api/v1/tokens/buy', { mint, amount_sol: 0.2, execute: false });
    await waiting;
    expect(await connection().getAccountInfo(pool, 'confirmed')).toBeNull();
    await migrate(mint);

    const bought = await buying;
    expect(bought.status).toBe(200);
    expect(bought.body).toMatchObject({ venue: 'pump-amm', route: expect.stringContaining('PumpSwap'), executed: true });
    const landed = await connection().getTransaction(bought.body.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    const keys = landed!.transaction.message.getAccountKeys({ accountKeysFromLookups: landed!.meta!.loadedAddresses });
    expect(keys.keySegments().flat().some((key) => key.equals(pool))).toBe(true);
    expect(keys.keySegments().flat().some((key) => key.equals(PUMP_AMM_PROGRAM_ID))).toBe(true);

    const built = await building;
    expect(built.status).toBe(200);
    expect(built.body).toMatchObject({ venue: 'pump-amm', executed: false, transaction: expect.any(String) });
    const handed = VersionedTransaction.deserialize(Buffer.from(built.body.transaction, 'base64'));
    expect(handed.message.staticAccountKeys.some((key) => key.equals(PUMP_AMM_PROGRAM_ID))).toBe(true);

    expect((await call(base, 'GET', `/api/v1/tokens/${mint}`)).body).toMatchObject({ venue: 'pump-amm', complete: true, status: 'graduated', pool: { address: pool.toBase58() } });
    const quote = await call(impatient.url, 'GET', `/api/v1/quote?mint=${mint}&side=buy&amount=0.1`);
    expect(quote.body).toMatchObject({ ok: true, venue: 'pump-amm' });
  }, 60_000);
});
