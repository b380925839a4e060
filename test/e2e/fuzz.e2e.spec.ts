import fc from 'fast-check';
import bs58 from 'bs58';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { routeTable } from '../../apps/api/src/routes/table';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { call } from '../support/http';

/** Random JSON at every route: whatever arrives, the answer is one the OpenAPI document describes, and never a 500. */
describe('every route under random input', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let key: string;
  let wallet: Keypair;
  /** A transfer the fuzzer's wallet signed, whose bytes the trading bodies mutate. */
  let signedTransfer: Buffer;

  beforeAll(async () => {
    db = await freshDatabase('fuzz');
    server = await startEmbedded(testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('fuzz') }));
    const registered = (await call(server.url, 'POST', '/api/v1/register', { body: { handle: 'fuzzer', model: 'm' } })).body;
    key = registered.api_key;
    // Funded, so that random transfers and submissions get past the balance checks into signing and sending.
    wallet = Keypair.fromSecretKey(bs58.decode(registered.wallet.secret_key));
    const connection = server.services.chain.connection;
    const airdrop = await connection.requestAirdrop(wallet.publicKey, 5 * LAMPORTS_PER_SOL);
    await connection.confirmTransaction({ signature: airdrop, ...(await connection.getLatestBlockhash()) }, 'confirmed');
    const { blockhash } = await connection.getLatestBlockhash();
    const transfer = SystemProgram.transfer({ fromPubkey: wallet.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 });
    const tx = new VersionedTransaction(new TransactionMessage({ payerKey: wallet.publicKey, recentBlockhash: blockhash, instructions: [transfer] }).compileToV0Message());
    tx.sign([wallet]);
    signedTransfer = Buffer.from(tx.serialize());
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const text = fc.oneof(
    fc.string(),
    fc.fullUnicodeString({ maxLength: 40 }),
    fc.constantFrom('', '0', '-1', '200', '1e309', 'null', 'true', '[]', '{}', '%00', '\u0000', 'a\u0000b', 'agent_x', 'fuzzer'),
  );
  const query = fc.dictionary(fc.constantFrom('limit', 'before', 'since', 'after', 'full', 'q', 'x', 'limit[]', 'mint', 'side', 'amount', 'slippage_bps'), text, { maxKeys: 4 });
  const someMint = fc.oneof(text, fc.constantFrom('So11111111111111111111111111111111111111112', SystemProgram.programId.toBase58(), new PublicKey(new Uint8Array(32).fill(9)).toBase58()));
  const someNumber = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(0, 1e-9, 0.01, 100, 100.01, 1e20), text);
  const body = fc.oneof(
    fc.jsonValue(),
    fc.record({ handle: fc.jsonValue(), model: fc.jsonValue(), custody: fc.jsonValue(), public_key: fc.jsonValue(), at: fc.jsonValue() }, { requiredKeys: [] }),
    fc.record({ handle: fc.stringMatching(/^[A-Za-z0-9_-]{0,33}$/), model: fc.string({ maxLength: 120 }), bio: fc.string({ maxLength: 450 }) }, { requiredKeys: [] }),
    fc.record({ handle: fc.stringMatching(/^[A-Za-z0-9_-]{2,20}$/), model: text, bio: text, at: fc.double() }, { requiredKeys: [] }),
    // Transfers and submissions: keys, amounts and transactions that are almost right.
    fc.record(
      {
        to: fc.oneof(text, fc.constantFrom('fuzzer', SystemProgram.programId.toBase58(), 'So11111111111111111111111111111111111111112', new PublicKey(new Uint8Array(32).fill(7)).toBase58())),
        amount: fc.oneof(fc.double(), fc.integer(), fc.constantFrom(1e-9, 1e-10, 0.001, 1e20, 18446744073.709551615), text),
        mint: fc.oneof(text, fc.constantFrom('So11111111111111111111111111111111111111112', SystemProgram.programId.toBase58())),
        memo: text,
        execute: fc.oneof(fc.boolean(), fc.jsonValue()),
        transaction: fc.oneof(
          text,
          fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString('base64')),
          fc.array(fc.tuple(fc.nat(), fc.nat(255)), { minLength: 1, maxLength: 3 }).map((flips) => {
            const bytes = Buffer.from(signedTransfer);
            for (const [at, value] of flips) bytes[at % bytes.length] = value;
            return bytes.toString('base64');
          }),
        ),
        simulate_only: fc.oneof(fc.boolean(), fc.jsonValue()),
      },
      { requiredKeys: [] },
    ),
  );
  // Trades and deploys: mints, percents, amounts and images that are almost right.
  const trade = fc.record(
    {
      mint: someMint,
      input_mint: someMint,
      output_mint: someMint,
      amount_sol: someNumber,
      amount: someNumber,
      percent: someNumber,
      slippage_bps: someNumber,
      priority_fee_sol: someNumber,
      close_token_account: fc.oneof(fc.boolean(), fc.jsonValue()),
      name: text,
      symbol: text,
      image: fc.oneof(text, fc.constantFrom('data:image/png;base64,', 'data:image/png;base64,iVBORw0KGgo=', 'https://10.0.0.1/a.png', 'http://x/a.png')),
      dev_buy_sol: someNumber,
      mayhem: fc.oneof(fc.boolean(), fc.jsonValue()),
      holder_reward: fc.oneof(fc.boolean(), fc.jsonValue()),
      fee_share: fc.oneof(fc.boolean(), fc.jsonValue()),
      metadata_uri: text,
      execute: fc.oneof(fc.boolean(), fc.jsonValue()),
    },
    { requiredKeys: [] },
  );
  // Path segments as a client might send them raw: malformed %-escapes included.
  const segment = fc.oneof(
    fc.string({ maxLength: 30 }).map((p) => encodeURIComponent(p) || 'x'),
    fc.constantFrom('%', '%zz', '%E0%A4%A', '%00', '%C0%AF', '..', '%2F', 'a%20b'),
  );
  const encoding = fc.constantFrom(undefined, undefined, undefined, 'gzip', 'br', 'deflate', 'identity', 'x-unknown');
  const raw = fc.oneof(fc.string(), fc.constantFrom('{', '{"a":', 'nul', '\u0000', '[1,', '"x"', '1'));

  it.each(routeTable().map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))('%s', async (_name, route) => {
    await fc.assert(
      fc.asyncProperty(
        query,
        fc.oneof(body.map((b) => ({ body: b as unknown })), trade.map((b) => ({ body: b as unknown })), raw.map((r) => ({ raw: r }))),
        segment,
        fc.constantFrom('none', 'valid', 'garbage'),
        encoding,
        async (q, payload, param, auth, contentEncoding) => {
          const path = route.path.replace(/\{\w+\}/g, param);
          const search = new URLSearchParams(q as Record<string, string>).toString();
          const headers: Record<string, string> = {};
          if (auth === 'valid') headers.authorization = `Bearer ${key}`;
          if (auth === 'garbage') headers.authorization = `Bearer svc_sk_${param}`;
          if (contentEncoding && route.method !== 'get') headers['content-encoding'] = contentEncoding;
          const options = route.method === 'get' ? { headers } : 'raw' in payload ? { raw: payload.raw, headers: { ...headers, 'content-type': 'application/json' } } : { body: payload.body, headers };
          const res = await call(server.url, route.method.toUpperCase(), search ? `${path}?${search}` : path, options);
          expect(res.status).toBeLessThan(500);
          // call() has checked the reply against the OpenAPI document: a status the route documents, and the
          // schema of that status (the envelope with its codes, or the route's own format: Prometheus text,
          // the OpenAPI document, JSON-RPC, ...).
          if (route.path === '/api/v1/rotate' && res.status === 200 && auth === 'valid') key = res.body.api_key;
        },
      ),
      // A fixed seed keeps CI repeatable; FUZZ_SEED=random (with a larger FUZZ_RUNS) explores further.
      { numRuns: Number(process.env.FUZZ_RUNS ?? 150), seed: process.env.FUZZ_SEED === 'random' ? undefined : Number(process.env.FUZZ_SEED ?? 20261122) },
    );
  }, 120_000);
});
