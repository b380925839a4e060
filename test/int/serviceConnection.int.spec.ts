import { Connection, Keypair, LAMPORTS_PER_SOL, SolanaJSONRPCError, SystemProgram, Transaction, sendAndConfirmTransaction } from '@solana/web3.js';
import { TOKEN_PROGRAM_ID, createMint } from '@solana/spl-token';
import { ServiceConnection, SolanaChain, isRpcUnreachable, rpcFetch } from '@svc/chain';
import { fakeHttp } from '../support/fakeHttp';
import { closeConnection, localnet, type LocalnetClient } from '../support/localnet';

type Accounts = Awaited<ReturnType<Connection['getMultipleAccountsInfo']>>;
/** Accounts in plain values, so that two decodings compare by content. */
const plain = (infos: Accounts) =>
  infos.map((info) => info && { executable: info.executable, owner: info.owner.toBase58(), lamports: info.lamports, rentEpoch: info.rentEpoch, data: info.data.toString('hex') });

describe("the service's Connection, which decodes the answers trades read", () => {
  let t: LocalnetClient;
  let ours: ServiceConnection;
  beforeAll(async () => {
    t = await localnet();
    ours = new ServiceConnection(t.connection.rpcEndpoint, { commitment: 'confirmed', wsEndpoint: t.net.wsUrl, fetch: rpcFetch });
  });
  afterAll(async () => {
    await closeConnection(ours);
    await t.close();
  });

  it('reads accounts as web3.js does: a wallet, a mint, programs and a missing key, in order, at a slot', async () => {
    const wallet = await t.funded(2);
    const mint = await createMint(t.connection, wallet, wallet.publicKey, null, 6);
    const keys = [wallet.publicKey, mint, SystemProgram.programId, Keypair.generate().publicKey, TOKEN_PROGRAM_ID];

    const read = await ours.getMultipleAccountsInfoAndContext(keys, 'confirmed');
    const theirs = await t.connection.getMultipleAccountsInfoAndContext(keys, 'confirmed');
    expect(plain(read.value)).toEqual(plain(theirs.value));
    expect(read.value[1]?.owner.equals(TOKEN_PROGRAM_ID)).toBe(true);
    expect(read.value[1]?.data).toBeInstanceOf(Buffer);
    expect(read.value[2]?.executable).toBe(true);
    expect(read.value[3]).toBeNull();
    expect(read.context.slot).toBeLessThanOrEqual(theirs.context.slot);
    expect(plain(await ours.getMultipleAccountsInfo(keys))).toEqual(plain(theirs.value));
    // An option it does not decode goes to web3.js: a slice of the mint's data.
    const sliced = await ours.getMultipleAccountsInfo([mint], { commitment: 'confirmed', dataSlice: { offset: 36, length: 8 } });
    expect(sliced[0]?.data.equals(theirs.value[1]!.data.subarray(36, 44))).toBe(true);
  });

  it('reads signature statuses as web3.js does, and confirms through them: landed, failed and unknown', async () => {
    const payer = await t.funded(1);
    const to = Keypair.generate().publicKey;
    const landed = await sendAndConfirmTransaction(ours, new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: LAMPORTS_PER_SOL / 10 })), [payer]);
    const tooMuch = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 5 * LAMPORTS_PER_SOL }));
    tooMuch.recentBlockhash = (await ours.getLatestBlockhash()).blockhash;
    tooMuch.feePayer = payer.publicKey;
    tooMuch.sign(payer);
    const failed = await ours.sendRawTransaction(tooMuch.serialize(), { skipPreflight: true });
    const confirmed = await ours.confirmTransaction({ signature: failed, ...(await ours.getLatestBlockhash()) }, 'confirmed');
    expect(confirmed.value.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    const unknown = 'z'.repeat(87);
    const signatures = [landed, failed, unknown];

    for (const config of [undefined, { searchTransactionHistory: true }]) {
      const read = await ours.getSignatureStatuses(signatures, config);
      const theirs = await t.connection.getSignatureStatuses(signatures, config);
      expect(read.value).toEqual(theirs.value);
      expect(read.value[0]).toMatchObject({ confirmationStatus: expect.stringMatching(/confirmed|finalized/), err: null });
      expect(read.value[1]?.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
      expect(read.value[2]).toBeNull();
    }
    expect((await ours.getSignatureStatus(landed)).value?.err).toBeNull();
  });

  it('refuses, through the service’s chain, answers that are not the documented ones, and keeps the RPC’s own errors and outages apart', async () => {
    const status = { slot: 3, confirmations: null, err: null, confirmationStatus: 'confirmed' };
    const accounts = (value: unknown[]) => ({ context: { slot: 7 }, value });
    const answers: Array<[number, string | Record<string, unknown>]> = [
      [200, { error: { code: -32602, message: 'Invalid param: WrongSize' } }],
      [200, { result: accounts([]) }],
      [200, { result: accounts([{ executable: false, lamports: 1, rentEpoch: 0, owner: 'not-a-key', data: ['', 'base64'] }]) }],
      [200, { result: accounts([{ executable: false, lamports: 1, rentEpoch: 0, owner: TOKEN_PROGRAM_ID.toBase58(), data: 'AAAA' }]) }],
      [200, { result: accounts([{ ...status, confirmationStatus: 'rooted' }]) }],
      [200, { result: accounts([{ ...status, err: 5 }]) }],
      [200, { result: { value: [status] } }],
      [503, 'Service Unavailable'],
    ];
    const rpc = await fakeHttp((_req, res, body) => {
      const [code, answer] = answers.shift()!;
      res.writeHead(code, { 'content-type': 'application/json' }).end(typeof answer === 'string' ? answer : JSON.stringify({ jsonrpc: '2.0', id: JSON.parse(body).id, ...answer }));
    });
    // The service's chain, so that these answers also show it reads through ServiceConnection.
    const chain = new SolanaChain({ rpcUrl: rpc.url });
    const { connection } = chain;
    const failure = (call: Promise<unknown>) => call.then(() => undefined, (error: unknown) => error as Error);
    const accountRead = () => failure(connection.getMultipleAccountsInfo([Keypair.generate().publicKey]));
    const statusRead = () => failure(connection.getSignatureStatuses(['1'.repeat(64)]));
    try {
      expect(await accountRead()).toMatchObject({ code: -32602, message: expect.stringMatching(/failed to get info for accounts .*Invalid param: WrongSize/) });
      const malformed = [
        [await accountRead(), /0 answers for 1 asked/],
        [await accountRead(), /account 0's owner is not a public key/],
        [await accountRead(), /account 0's data is not \[base64, "base64"\]/],
        [await statusRead(), /status 0's confirmationStatus is rooted/],
        [await statusRead(), /status 0's err is neither an error nor null/],
        [await statusRead(), /getSignatureStatuses .* no context.slot/],
      ] as const;
      for (const [error, why] of malformed) {
        expect(error).toBeInstanceOf(SolanaJSONRPCError);
        expect(error?.message).toMatch(why);
        expect(isRpcUnreachable(error)).toBe(false);
      }
      expect(isRpcUnreachable(await statusRead())).toBe(true);
      expect(answers).toHaveLength(0);
    } finally {
      await chain.close();
      await rpc.close();
    }
  });
});
