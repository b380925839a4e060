import {
  Connection,
  Keypair,
  PublicKey,
  SolanaJSONRPCError,
  SystemProgram,
  TransactionMessage,
  VersionedTransaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import {
  ExtensionType,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  createAccount,
  createAssociatedTokenAccountIdempotent,
  createInitializeMint2Instruction,
  createInitializeMintCloseAuthorityInstruction,
  createMint,
  getAccount,
  getAssociatedTokenAddressSync,
  getExtensionTypes,
  getMintLen,
  mintTo,
} from '@solana/spl-token';
import {
  ChainError,
  SolanaChain,
  WRAPPED_SOL_MINT,
  isRpcUnreachable,
  mintInfo,
  recentBlockhash,
  sendAndConfirm,
  signTransaction,
  tokenBalanceRaw,
  tokenTransferInstructions,
  uiToRaw,
  walletHoldings,
} from '@svc/chain';
import { LOCAL_USD_MINT, jupiterRoutes, stablecoinSeed } from '../../apps/localnet/src/jupiter';
import { fakeHttp } from '../support/fakeHttp';
import { localnet, type LocalnetClient } from '../support/localnet';

let t: LocalnetClient;
let connection: Connection;
let payer: Keypair;

beforeAll(async () => {
  t = await localnet({ seeds: [stablecoinSeed({ solUsd: 150 })], routes: [jupiterRoutes({ solUsd: 150 })] });
  connection = t.connection;
  payer = await t.funded(100);
});
afterAll(() => t.close());

const CONFIRMED = { commitment: 'confirmed' } as const;

/** A mint of `programId` with `payer` as its authority. */
const newMint = (programId: PublicKey, decimals: number) => createMint(connection, payer, payer.publicKey, null, decimals, Keypair.generate(), CONFIRMED, programId);

/** `raw` base units minted into the owner's associated token account (created if needed). */
async function mintToOwner(mint: PublicKey, owner: PublicKey, raw: bigint, programId: PublicKey): Promise<PublicKey> {
  const account = await createAssociatedTokenAccountIdempotent(connection, payer, mint, owner, CONFIRMED, programId);
  await mintTo(connection, payer, mint, account, payer, raw, [], CONFIRMED, programId);
  return account;
}

/** Signs with `signers` (the first pays) and waits for the confirmation, through the service's own send path. */
async function send(instructions: TransactionInstruction[], signers: Keypair[]): Promise<string> {
  const recent = await recentBlockhash(connection);
  const message = new TransactionMessage({ payerKey: signers[0]!.publicKey, recentBlockhash: recent.blockhash, instructions }).compileToV0Message();
  const signed = signTransaction(new VersionedTransaction(message), signers, recent);
  return (await sendAndConfirm(connection, signed)).signature;
}

/** The chain side's refusal, as the API would map it. */
async function rejectionOf(promise: Promise<unknown>): Promise<{ code: string; details: Record<string, unknown> }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ChainError)) throw new Error(`expected a ChainError, got ${String(error)}`);
  return error.rejection;
}

/** A fetch that counts the requests it passes on to the real one. */
function countingFetch() {
  const counted = { requests: [] as string[], fetch: ((input: string | URL | Request, init?: RequestInit) => {
    counted.requests.push(String(input));
    return fetch(input, init);
  }) as typeof fetch };
  return counted;
}

/** An HTTP server on a free port that answers every request with `answer` (or never, when it is undefined). */
describe('mintInfo', () => {
  it('reads an SPL Token mint and a Token-2022 mint: program, decimals, supply', async () => {
    const spl = await newMint(TOKEN_PROGRAM_ID, 6);
    const t22 = await newMint(TOKEN_2022_PROGRAM_ID, 9);
    await mintToOwner(spl, payer.publicKey, 123_456_789n, TOKEN_PROGRAM_ID);
    await mintToOwner(t22, payer.publicKey, 5_000_000_000n, TOKEN_2022_PROGRAM_ID);

    const splInfo = await mintInfo(connection, spl);
    expect(splInfo).toEqual({ programId: TOKEN_PROGRAM_ID, decimals: 6, supply: 123_456_789n });
    const t22Info = await mintInfo(connection, t22);
    expect(t22Info).toEqual({ programId: TOKEN_2022_PROGRAM_ID, decimals: 9, supply: 5_000_000_000n });
    // The seeded stablecoin is a mint the chain started with.
    expect(await mintInfo(connection, LOCAL_USD_MINT)).toMatchObject({ programId: TOKEN_PROGRAM_ID, decimals: 6 });
  });

  it('reads a Token-2022 mint that carries extensions (its data runs past a token account’s size)', async () => {
    const mint = Keypair.generate();
    const space = getMintLen([ExtensionType.MintCloseAuthority]);
    const lamports = await connection.getMinimumBalanceForRentExemption(space);
    await send(
      [
        SystemProgram.createAccount({ fromPubkey: payer.publicKey, newAccountPubkey: mint.publicKey, space, lamports, programId: TOKEN_2022_PROGRAM_ID }),
        createInitializeMintCloseAuthorityInstruction(mint.publicKey, payer.publicKey, TOKEN_2022_PROGRAM_ID),
        createInitializeMint2Instruction(mint.publicKey, 3, payer.publicKey, null, TOKEN_2022_PROGRAM_ID),
      ],
      [payer, mint],
    );
    expect(space).toBeGreaterThan(165);
    expect(await mintInfo(connection, mint.publicKey)).toEqual({ programId: TOKEN_2022_PROGRAM_ID, decimals: 3, supply: 0n });
  });

  it('is unknown_mint for a key with no account, a wallet, a token account, and an uninitialized token-program account', async () => {
    const spl = await newMint(TOKEN_PROGRAM_ID, 6);
    const splAccount = await mintToOwner(spl, payer.publicKey, 1n, TOKEN_PROGRAM_ID);
    const t22 = await newMint(TOKEN_2022_PROGRAM_ID, 6);
    const t22Account = await mintToOwner(t22, payer.publicKey, 1n, TOKEN_2022_PROGRAM_ID);
    const blank = Keypair.generate();
    await send(
      [SystemProgram.createAccount({ fromPubkey: payer.publicKey, newAccountPubkey: blank.publicKey, space: 82, lamports: await connection.getMinimumBalanceForRentExemption(82), programId: TOKEN_PROGRAM_ID })],
      [payer, blank],
    );

    for (const notAMint of [Keypair.generate().publicKey, payer.publicKey, splAccount, t22Account, blank.publicKey]) {
      const refused = await rejectionOf(mintInfo(connection, notAMint));
      expect(refused.code).toBe('unknown_mint');
      expect(refused.details).toEqual({ mint: notAMint.toBase58() });
    }
  });
});

describe('tokenTransferInstructions and tokenBalanceRaw', () => {
  it.each([
    ['SPL Token', TOKEN_PROGRAM_ID],
    ['Token-2022', TOKEN_2022_PROGRAM_ID],
  ])('moves %s tokens to a wallet with no token account, creating it, and again once it exists', async (_, programId) => {
    const mint = await newMint(programId, 6);
    const sender = await t.funded(1);
    await mintToOwner(mint, sender.publicKey, 10_000_000n, programId);
    // The recipient has never been seen on-chain: no SOL, no token account.
    const recipient = Keypair.generate().publicKey;
    const recipientAta = getAssociatedTokenAddressSync(mint, recipient, false, programId);
    expect(await connection.getAccountInfo(recipientAta)).toBeNull();
    expect(await tokenBalanceRaw(connection, recipient, mint, programId)).toBe(0n);

    const info = await mintInfo(connection, mint);
    const raw = uiToRaw(2.5, info.decimals);
    const senderSolBefore = BigInt(await connection.getBalance(sender.publicKey));
    await send(tokenTransferInstructions({ owner: sender.publicKey, to: recipient, mint, programId: info.programId, decimals: info.decimals, raw }), [sender]);

    expect(await tokenBalanceRaw(connection, recipient, mint, programId)).toBe(2_500_000n);
    expect(await tokenBalanceRaw(connection, sender.publicKey, mint, programId)).toBe(7_500_000n);
    const created = await getAccount(connection, recipientAta, 'confirmed', programId);
    expect(created).toMatchObject({ owner: recipient, mint, amount: 2_500_000n });
    const ataInfo = (await connection.getAccountInfo(recipientAta))!;
    expect(ataInfo.owner.equals(programId)).toBe(true);
    // The sender paid the new account's rent (and the fee).
    const rent = BigInt(await connection.getMinimumBalanceForRentExemption(ataInfo.data.length));
    expect(senderSolBefore - BigInt(await connection.getBalance(sender.publicKey))).toBe(rent + 5000n);
    if (programId.equals(TOKEN_2022_PROGRAM_ID)) {
      // The ATA program sizes a Token-2022 account for its ImmutableOwner extension, as on mainnet.
      expect(getExtensionTypes(created.tlvData)).toContain(ExtensionType.ImmutableOwner);
    }

    // The account exists now: the idempotent create is a no-op and the transfer still lands.
    await send(tokenTransferInstructions({ owner: sender.publicKey, to: recipient, mint, programId, decimals: 6, raw: 1n }), [sender]);
    expect(await tokenBalanceRaw(connection, recipient, mint, programId)).toBe(2_500_001n);
    expect(await tokenBalanceRaw(connection, sender.publicKey, mint, programId)).toBe(7_499_999n);
  });

  it('refuses on-chain a transfer whose decimals do not match the mint (transferChecked)', async () => {
    const mint = await newMint(TOKEN_PROGRAM_ID, 6);
    const sender = await t.funded(1);
    await mintToOwner(mint, sender.publicKey, 1_000n, TOKEN_PROGRAM_ID);
    const wrong = tokenTransferInstructions({ owner: sender.publicKey, to: Keypair.generate().publicKey, mint, programId: TOKEN_PROGRAM_ID, decimals: 9, raw: 1n });
    await expect(send(wrong, [sender])).rejects.toMatchObject({ code: 'send_failed' });
    expect(await tokenBalanceRaw(connection, sender.publicKey, mint, TOKEN_PROGRAM_ID)).toBe(1_000n);
  });
});

describe('one JSON-RPC batch for a wallet’s balance and all its token accounts', () => {
  let owner: Keypair;
  let spl: PublicKey;
  let t22: PublicKey;
  let empty: PublicKey;
  let second: PublicKey;

  beforeAll(async () => {
    owner = await t.funded(3);
    spl = await newMint(TOKEN_PROGRAM_ID, 6);
    t22 = await newMint(TOKEN_2022_PROGRAM_ID, 9);
    empty = await newMint(TOKEN_PROGRAM_ID, 2);
    await mintToOwner(spl, owner.publicKey, 1_234_567n, TOKEN_PROGRAM_ID);
    await mintToOwner(t22, owner.publicKey, 42_000_000_001n, TOKEN_2022_PROGRAM_ID);
    await createAssociatedTokenAccountIdempotent(connection, payer, empty, owner.publicKey, CONFIRMED, TOKEN_PROGRAM_ID);
    // A second, non-associated account of the same SPL mint.
    second = await createAccount(connection, payer, spl, owner.publicKey, Keypair.generate(), CONFIRMED, TOKEN_PROGRAM_ID);
    await mintTo(connection, payer, spl, second, payer, 5n, [], CONFIRMED, TOKEN_PROGRAM_ID);
  });

  it('the local chain answers a batch of getBalance and getTokenAccountsByOwner for both programs, reply by id', async () => {
    const wallet = owner.publicKey.toBase58();
    const parsed = { encoding: 'jsonParsed', commitment: 'confirmed' };
    const batch = [
      { jsonrpc: '2.0', id: 'balance', method: 'getBalance', params: [wallet] },
      { jsonrpc: '2.0', id: 7, method: 'getTokenAccountsByOwner', params: [wallet, { programId: TOKEN_PROGRAM_ID.toBase58() }, parsed] },
      { jsonrpc: '2.0', id: 8, method: 'getTokenAccountsByOwner', params: [wallet, { programId: TOKEN_2022_PROGRAM_ID.toBase58() }, parsed] },
    ];
    const response = await fetch(t.net.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) });
    expect(response.status).toBe(200);
    const replies = (await response.json()) as Array<{ id: unknown; result: { context: { slot: number }; value: any } }>;
    expect(replies.map((r) => r.id)).toEqual(['balance', 7, 8]);
    expect(replies[0]!.result.value).toBe(await connection.getBalance(owner.publicKey));
    const mintsOf = (reply: (typeof replies)[number]) => reply.result.value.map((a: any) => a.account.data.parsed.info.mint).sort();
    expect(mintsOf(replies[1]!)).toEqual([spl, spl, empty].map((k) => k.toBase58()).sort());
    expect(mintsOf(replies[2]!)).toEqual([t22.toBase58()]);
    for (const reply of replies) expect(reply.result.context.slot).toEqual(expect.any(Number));
    // What web3.js itself reads with one call per program.
    const viaWeb3 = await connection.getParsedTokenAccountsByOwner(owner.publicKey, { programId: TOKEN_2022_PROGRAM_ID });
    expect(viaWeb3.value.map((a) => a.account.data.parsed.info)).toEqual(replies[2]!.result.value.map((a: any) => a.account.data.parsed.info));
  });

  it('walletHoldings reads everything in one HTTP request, as web3.js sees it', async () => {
    const counted = countingFetch();
    const held = await walletHoldings(connection, owner.publicKey, { fetch: counted.fetch });
    expect(counted.requests).toEqual([t.net.rpcUrl]);

    expect(held.lamports).toBe(BigInt(await connection.getBalance(owner.publicKey)));
    const expected = [];
    for (const programId of [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID]) {
      const { value } = await connection.getParsedTokenAccountsByOwner(owner.publicKey, { programId });
      for (const { pubkey, account } of value) {
        const amount = account.data.parsed.info.tokenAmount;
        expected.push({
          account: pubkey.toBase58(),
          mint: account.data.parsed.info.mint,
          programId: programId.toBase58(),
          raw: BigInt(amount.amount),
          decimals: amount.decimals,
          uiAmount: amount.uiAmount,
        });
      }
    }
    const byAccount = (a: { account: string }, b: { account: string }) => a.account.localeCompare(b.account);
    expect([...held.tokens].sort(byAccount)).toEqual(expected.sort(byAccount));
    expect(held.tokens).toHaveLength(4);
    expect(held.tokens.find((h) => h.mint === t22.toBase58())).toMatchObject({ raw: 42_000_000_001n, uiAmount: 42.000000001, decimals: 9 });
    expect(held.tokens.find((h) => h.account === second.toBase58())).toMatchObject({ raw: 5n, uiAmount: 0.000005 });
    expect(held.tokens.find((h) => h.mint === empty.toBase58())).toMatchObject({ raw: 0n, uiAmount: 0 });
  });

  it('a wallet the chain has never seen holds nothing', async () => {
    expect(await walletHoldings(connection, Keypair.generate().publicKey)).toEqual({ lamports: 0n, tokens: [] });
  });

  it('an RPC that cannot be reached, answers 503, or does not answer in time is unreachable', async () => {
    const down = await fakeHttp((_req, res) => res.writeHead(503).end('no healthy upstream'));
    const silent = await fakeHttp();
    // Closed after the others are bound: a port freed first could be handed to the silent one, which never answers.
    const closed = await fakeHttp();
    await closed.close();
    try {
      for (const [url, timeoutMs] of [[closed.url, undefined], [down.url, undefined], [silent.url, 200]] as const) {
        const error = await walletHoldings(new Connection(url), owner.publicKey, { timeoutMs }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(Error);
        expect(isRpcUnreachable(error)).toBe(true);
      }
    } finally {
      await Promise.all([down.close(), silent.close()]);
    }
  });

  it('an RPC that refuses batches (one error object for the whole batch) is a JSON-RPC error, not a crash', async () => {
    const refusing = await fakeHttp((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch requests are not allowed on this plan' } })),
    );
    try {
      const error = await walletHoldings(new Connection(refusing.url), owner.publicKey).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SolanaJSONRPCError);
      expect((error as SolanaJSONRPCError).code).toBe(-32600);
      expect((error as Error).message).toMatch(/batch requests are not allowed on this plan/);
    } finally {
      await refusing.close();
    }
  });
});

describe('usdPrices over the local chain’s price API', () => {
  const SOL = WRAPPED_SOL_MINT;
  const USD = LOCAL_USD_MINT.toBase58();

  it('prices every mint in one request, null for a mint with no market, and serves them from the cache for a minute', async () => {
    const counted = countingFetch();
    const chain = new SolanaChain({ rpcUrl: t.net.rpcUrl, priceUrl: t.net.rpcUrl, fetch: counted.fetch });
    const unpriced = (await newMint(TOKEN_2022_PROGRAM_ID, 6)).toBase58();
    const nothing = Keypair.generate().publicKey.toBase58();
    try {
      const prices = await chain.usdPrices([SOL, USD, unpriced, nothing, USD], 1_000);
      expect(counted.requests).toHaveLength(1);
      expect(new URL(counted.requests[0]!).searchParams.get('ids')!.split(',')).toEqual([SOL, USD, unpriced, nothing]);
      expect([...prices.keys()]).toEqual([SOL, USD, unpriced, nothing]);
      expect(prices.get(SOL)).toBe(150);
      expect(prices.get(USD)).toBeCloseTo(1, 6);
      expect(prices.get(unpriced)).toBeNull();
      expect(prices.get(nothing)).toBeNull();

      // Within the minute, no request, including for the mints that had no price, and for SOL through solUsd.
      expect(await chain.usdPrices([USD, unpriced], 60_000)).toEqual(new Map([[USD, prices.get(USD)], [unpriced, null]]));
      expect(await chain.solUsd(60_999)).toBe(150);
      expect(counted.requests).toHaveLength(1);

      // A mint not seen before is asked for alone; once the minute is over, the others are asked for again.
      const another = Keypair.generate().publicKey.toBase58();
      expect((await chain.usdPrices([USD, another], 30_000)).get(another)).toBeNull();
      expect(counted.requests).toHaveLength(2);
      expect(new URL(counted.requests[1]!).searchParams.get('ids')).toBe(another);
      expect((await chain.usdPrices([SOL, USD, another], 61_000)).get(SOL)).toBe(150);
      expect(counted.requests).toHaveLength(3);
      expect(new URL(counted.requests[2]!).searchParams.get('ids')).toBe(`${SOL},${USD}`);
    } finally {
      await chain.close();
    }
  });

  it('splits a long list into requests of 50 ids, as the price API takes at most 50', async () => {
    const counted = countingFetch();
    const chain = new SolanaChain({ rpcUrl: t.net.rpcUrl, priceUrl: t.net.rpcUrl, fetch: counted.fetch });
    const others = Array.from({ length: 119 }, () => Keypair.generate().publicKey.toBase58());
    try {
      const prices = await chain.usdPrices([USD, ...others]);
      expect(counted.requests.map((url) => new URL(url).searchParams.get('ids')!.split(',').length)).toEqual([50, 50, 20]);
      expect(prices.size).toBe(120);
      expect(prices.get(USD)).toBeCloseTo(1, 6);
      expect(others.every((mint) => prices.get(mint) === null)).toBe(true);
    } finally {
      await chain.close();
    }
  });
});
