import net from 'node:net';
import { WebSocket } from 'ws';
import {
  AddressLookupTableProgram,
  ComputeBudgetProgram,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
  sendAndConfirmTransaction,
} from '@solana/web3.js';
import { createMint, getAccount, getOrCreateAssociatedTokenAccount, mintTo, transfer, TOKEN_PROGRAM_ID, approve } from '@solana/spl-token';
import { localnet, rpc, type LocalnetClient } from '../support/localnet';
import { PROBE_ID, probe } from '../support/probeProgram';

describe('localnet JSON-RPC through web3.js and spl-token', () => {
  let t: LocalnetClient;
  beforeAll(async () => {
    t = await localnet({ programs: [probe] });
  });
  afterAll(() => t.close());

  test('airdrop, sendAndConfirmTransaction and the recorded transaction', async () => {
    const a = await t.funded(2);
    const b = Keypair.generate();
    expect(await t.connection.getBalance(a.publicKey)).toBe(2 * LAMPORTS_PER_SOL);
    const signature = await sendAndConfirmTransaction(
      t.connection,
      new Transaction().add(SystemProgram.transfer({ fromPubkey: a.publicKey, toPubkey: b.publicKey, lamports: 1_000_000 })),
      [a],
    );
    expect(await t.connection.getBalance(b.publicKey)).toBe(1_000_000);
    expect(await t.connection.getBalance(a.publicKey)).toBe(2 * LAMPORTS_PER_SOL - 1_000_000 - 5000);
    const recorded = await t.connection.getTransaction(signature, { maxSupportedTransactionVersion: 0, commitment: 'confirmed' });
    expect(recorded?.meta?.fee).toBe(5000);
    expect(recorded?.meta?.preBalances.slice(0, 2)).toEqual([2 * LAMPORTS_PER_SOL, 0]);
    expect(recorded?.meta?.postBalances.slice(0, 2)).toEqual([2 * LAMPORTS_PER_SOL - 1_005_000, 1_000_000]);
    expect(recorded?.meta?.logMessages).toContain('Program 11111111111111111111111111111111 success');
    expect(recorded?.transaction.signatures[0]).toBe(signature);
    const statuses = await t.connection.getSignatureStatuses([signature, bs58Signature()]);
    expect(statuses.value[0]).toMatchObject({ err: null, confirmationStatus: 'finalized' });
    expect(statuses.value[1]).toBeNull();
    const history = await t.connection.getSignaturesForAddress(b.publicKey);
    expect(history.map((h) => h.signature)).toEqual([signature]);
  });

  test('spl-token helpers: mint, associated accounts, transfer, balances and parsed accounts', async () => {
    const owner = await t.funded(5);
    const other = Keypair.generate();
    const mint = await createMint(t.connection, owner, owner.publicKey, null, 6);
    const mine = await getOrCreateAssociatedTokenAccount(t.connection, owner, mint, owner.publicKey);
    await mintTo(t.connection, owner, mint, mine.address, owner, 1_000_000n);
    const theirs = await getOrCreateAssociatedTokenAccount(t.connection, owner, mint, other.publicKey);
    const signature = await transfer(t.connection, owner, mine.address, theirs.address, owner, 250_000n);

    expect((await getAccount(t.connection, theirs.address)).amount).toBe(250_000n);
    expect((await t.connection.getTokenAccountBalance(mine.address)).value).toEqual({ amount: '750000', decimals: 6, uiAmount: 0.75, uiAmountString: '0.75' });
    expect((await t.connection.getTokenSupply(mint)).value.amount).toBe('1000000');
    const parsed = await t.connection.getParsedTokenAccountsByOwner(other.publicKey, { mint });
    expect(parsed.value).toHaveLength(1);
    expect(parsed.value[0].account.data.parsed.info).toMatchObject({ mint: mint.toBase58(), owner: other.publicKey.toBase58(), state: 'initialized' });
    expect(parsed.value[0].account.data.parsed.info.tokenAmount.amount).toBe('250000');
    const byProgram = await t.connection.getTokenAccountsByOwner(owner.publicKey, { programId: TOKEN_PROGRAM_ID });
    expect(byProgram.value.map((v) => v.pubkey.toBase58())).toEqual([mine.address.toBase58()]);

    const recorded = await t.connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
    const creation = await t.connection.getTransaction((await t.connection.getSignaturesForAddress(theirs.address)).at(-1)!.signature, { maxSupportedTransactionVersion: 0 });
    // The associated token program's CPIs into System and Token, straight from LiteSVM.
    expect(creation?.meta?.innerInstructions?.[0].instructions.length).toBeGreaterThanOrEqual(3);
    const amounts = (balances: any[]) => balances.map((b) => [b.owner, b.uiTokenAmount.amount]).sort();
    const sorted = (rows: string[][]) => rows.sort();
    expect(amounts(recorded!.meta!.preTokenBalances!)).toEqual(sorted([[owner.publicKey.toBase58(), '1000000'], [other.publicKey.toBase58(), '0']]));
    expect(amounts(recorded!.meta!.postTokenBalances!)).toEqual(sorted([[owner.publicKey.toBase58(), '750000'], [other.publicKey.toBase58(), '250000']]));

    const largest = await t.connection.getTokenLargestAccounts(mint);
    expect(largest.value.map((l) => [l.address.toBase58(), l.amount])).toEqual([
      [mine.address.toBase58(), '750000'],
      [theirs.address.toBase58(), '250000'],
    ]);
    await approve(t.connection, owner, mine.address, other.publicKey, owner, 5n);
    const delegated = await rpc(t.net.rpcUrl, 'getTokenAccountsByDelegate', [other.publicKey.toBase58(), { mint: mint.toBase58() }, { encoding: 'jsonParsed' }]);
    expect(delegated.result.value.map((d: { pubkey: string }) => d.pubkey)).toEqual([mine.address.toBase58()]);
    expect(delegated.result.value[0].account.data.parsed.info.delegatedAmount.amount).toBe('5');
    const filtered = await t.connection.getProgramAccounts(TOKEN_PROGRAM_ID, {
      filters: [{ dataSize: 165 }, { memcmp: { offset: 0, bytes: mint.toBase58() } }, { memcmp: { offset: 32, bytes: other.publicKey.toBase58() } }],
    });
    expect(filtered.map((f) => f.pubkey.toBase58())).toEqual([theirs.address.toBase58()]);
    const multiple = await t.connection.getMultipleAccountsInfo([mint, Keypair.generate().publicKey]);
    expect(multiple[0]?.owner.equals(TOKEN_PROGRAM_ID)).toBe(true);
    expect(multiple[1]).toBeNull();
  });

  test('simulateTransaction: no signatures needed by default, replaceRecentBlockhash, and no state change', async () => {
    const a = await t.funded(1);
    const b = Keypair.generate();
    const message = new TransactionMessage({
      payerKey: a.publicKey,
      recentBlockhash: PublicKey.default.toBase58(),
      instructions: [SystemProgram.transfer({ fromPubkey: a.publicKey, toPubkey: b.publicKey, lamports: 1_000_000 })],
    }).compileToV0Message();
    const unsignedTx = new VersionedTransaction(message);
    const simulated = await t.connection.simulateTransaction(unsignedTx, { replaceRecentBlockhash: true, accounts: { addresses: [b.publicKey.toBase58()], encoding: 'base64' } });
    expect(simulated.value.err).toBeNull();
    expect(simulated.value.logs).toContain('Program 11111111111111111111111111111111 success');
    expect(simulated.value.accounts?.[0]?.lamports).toBe(1_000_000);
    // The newest blockhash when it ran (a slot may have passed since, so it is checked as valid, not as latest).
    expect((await t.connection.isBlockhashValid((simulated.value as any).replacementBlockhash.blockhash)).value).toBe(true);
    expect(await t.connection.getBalance(b.publicKey)).toBe(0);
    const withoutReplace = await t.connection.simulateTransaction(unsignedTx, { sigVerify: false });
    expect(withoutReplace.value.err).toBe('BlockhashNotFound');
  });

  test('fees for a message, rent and the cluster calls that clients make at start', async () => {
    const a = await t.funded(1);
    const message = new TransactionMessage({
      payerKey: a.publicKey,
      recentBlockhash: (await t.connection.getLatestBlockhash()).blockhash,
      instructions: [SystemProgram.transfer({ fromPubkey: a.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 7 })],
    }).compileToV0Message();
    expect((await t.connection.getFeeForMessage(message)).value).toBe(5000);
    expect(await t.connection.getMinimumBalanceForRentExemption(165)).toBe(2_039_280);
    expect((await t.connection.getVersion())['solana-core']).toMatch(/^\d+\.\d+\.\d+$/);
    const epoch = await t.connection.getEpochInfo();
    expect(epoch.absoluteSlot).toBe(await t.connection.getSlot());
    expect(await rpc(t.net.rpcUrl, 'getHealth')).toMatchObject({ result: 'ok' });
    expect((await t.connection.getRecentPrioritizationFees()).length).toBeGreaterThan(0);
  });

  test('priority fees are charged and reported as agave computes them (3,000 units per builtin, 200,000 otherwise)', async () => {
    const a = await t.funded(1);
    const to = Keypair.generate().publicKey;
    const priced = new Transaction().add(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000_000 }), SystemProgram.transfer({ fromPubkey: a.publicKey, toPubkey: to, lamports: 1_000_000 }));
    const signature = await sendAndConfirmTransaction(t.connection, priced, [a]);
    expect((await t.connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 }))?.meta?.fee).toBe(5000 + 6000);
    expect(await t.connection.getBalance(a.publicKey)).toBe(LAMPORTS_PER_SOL - 1_000_000 - 11_000);
    const limited = new TransactionMessage({
      payerKey: a.publicKey,
      recentBlockhash: (await t.connection.getLatestBlockhash()).blockhash,
      instructions: [ComputeBudgetProgram.setComputeUnitLimit({ units: 200_000 }), ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000_000 }), SystemProgram.transfer({ fromPubkey: a.publicKey, toPubkey: to, lamports: 1 })],
    }).compileToV0Message();
    expect((await t.connection.getFeeForMessage(limited)).value).toBe(205_000);
  });
  test('an address lookup table created at the current slot serves a v0 transaction', async () => {
    const a = await t.funded(1);
    const to = Keypair.generate().publicKey;
    const [create, table] = AddressLookupTableProgram.createLookupTable({ authority: a.publicKey, payer: a.publicKey, recentSlot: await t.connection.getSlot() });
    const extend = AddressLookupTableProgram.extendLookupTable({ lookupTable: table, authority: a.publicKey, payer: a.publicKey, addresses: [to] });
    await sendAndConfirmTransaction(t.connection, new Transaction().add(create, extend), [a]);
    const lookup = (await t.connection.getAddressLookupTable(table)).value!;
    expect(lookup.state.addresses.map((k) => k.toBase58())).toEqual([to.toBase58()]);
    // A table serves transactions from the slot after its last extension, as on mainnet.
    const slot = await t.connection.getSlot();
    await new Promise<void>((resolve) => {
      const id = t.connection.onSlotChange((info) => {
        if (info.slot <= slot) return;
        void t.connection.removeSlotChangeListener(id);
        resolve();
      });
    });
    const latest = await t.connection.getLatestBlockhash();
    const message = new TransactionMessage({ payerKey: a.publicKey, recentBlockhash: latest.blockhash, instructions: [SystemProgram.transfer({ fromPubkey: a.publicKey, toPubkey: to, lamports: 1_000_000 })] }).compileToV0Message([lookup]);
    expect(message.addressTableLookups).toHaveLength(1);
    const v0 = new VersionedTransaction(message);
    v0.sign([a]);
    const signature = await t.connection.sendTransaction(v0);
    await t.connection.confirmTransaction({ signature, ...latest });
    expect(await t.connection.getBalance(to)).toBe(1_000_000);
    const recorded = await t.connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
    expect(recorded?.meta?.loadedAddresses?.writable.map((k) => k.toBase58())).toEqual([to.toBase58()]);
  });

  test('blocks, history and the cluster calls that web3.js wraps answer in its schema', async () => {
    const a = await t.funded(1);
    const signature = await sendAndConfirmTransaction(t.connection, new Transaction().add(SystemProgram.transfer({ fromPubkey: a.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 })), [a]);
    const { slot } = (await t.connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 }))!;
    const block = await t.connection.getBlock(slot, { maxSupportedTransactionVersion: 0 });
    expect(block?.transactions.map((tx) => tx.transaction.signatures[0])).toContain(signature);
    expect((await t.connection.getParsedBlock(slot, { maxSupportedTransactionVersion: 0 })).transactions.length).toBeGreaterThan(0);
    expect(await t.connection.getBlockTime(slot)).toBe(block?.blockTime);
    expect(await t.connection.getBlocks(Math.max(0, slot - 2), slot)).toContain(slot);
    expect((await t.connection.getBlockSignatures(slot)).signatures).toContain(signature);
    expect((await t.connection.getEpochSchedule()).slotsPerEpoch).toBe(432_000);
    expect((await t.connection.getSupply()).value.circulating).toBeGreaterThan(0);
    expect((await t.connection.getRecentPerformanceSamples(1))[0].numTransactions).toBeGreaterThan(0);
    expect(await t.connection.getFirstAvailableBlock()).toBe(0);
    expect(typeof (await t.connection.getSlotLeader())).toBe('string');
    expect((await t.connection.getClusterNodes()).length).toBe(1);
    expect((await t.connection.getVoteAccounts()).current).toEqual([]);
    expect(await t.connection.getStakeMinimumDelegation()).toMatchObject({ value: 1_000_000_000 });
    await expect(t.connection.getBalance(a.publicKey, { minContextSlot: 1e9 })).rejects.toThrow(/Minimum context slot has not been reached/);
    const raw = await fetch(t.net.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getAccountInfo', params: [a.publicKey.toBase58(), { encoding: 'base64' }] }) });
    expect(await raw.text()).toContain('"rentEpoch":18446744073709551615');
    const program = await t.connection.getAccountInfo(PROBE_ID);
    expect(program?.executable).toBe(true);
  });

  test('account, program, logs, slot and root subscriptions notify over the WebSocket', async () => {
    const a = await t.funded(1);
    const watched = Keypair.generate().publicKey;
    const once = <T>(subscribe: (done: (value: T) => void) => number, remove: (id: number) => Promise<void>) =>
      new Promise<T>((resolve) => {
        const id = subscribe((value) => {
          void remove(id);
          resolve(value);
        });
      });
    const seen = once<number>((done) => t.connection.onAccountChange(watched, (info) => done(info.lamports)), (id) => t.connection.removeAccountChangeListener(id));
    const owned = once<string>(
      (done) =>
        t.connection.onProgramAccountChange(
          SystemProgram.programId,
          (info) => info.accountId.equals(watched) && done(info.accountId.toBase58()),
          { filters: [{ dataSize: 0 }] },
        ),
      (id) => t.connection.removeProgramAccountChangeListener(id),
    );
    const logged = once<{ signature: string; logs: string[] }>((done) => t.connection.onLogs(watched, (logs) => done(logs)), (id) => t.connection.removeOnLogsListener(id));
    const slot = once<number>((done) => t.connection.onSlotChange((info) => done(info.slot)), (id) => t.connection.removeSlotChangeListener(id));
    const root = once<number>((done) => t.connection.onRootChange((r) => done(r)), (id) => t.connection.removeRootChangeListener(id));
    // The subscription is registered once the server has answered it; wait for that before the transfer.
    await waitForSubscriptions(t);
    const signature = await sendAndConfirmTransaction(t.connection, new Transaction().add(SystemProgram.transfer({ fromPubkey: a.publicKey, toPubkey: watched, lamports: 4_242_000 })), [a]);
    expect(await seen).toBe(4_242_000);
    expect(await owned).toBe(watched.toBase58());
    const logs = await logged;
    expect(logs.signature).toBe(signature);
    expect(logs.logs).toContain('Program 11111111111111111111111111111111 success');
    expect(await slot).toBeGreaterThan(0);
    expect(await root).toBeGreaterThan(0);
  });

  test('a signature subscription that fired stops counting against its connection', async () => {
    const a = await t.funded(1);
    const signature = await sendAndConfirmTransaction(t.connection, new Transaction().add(SystemProgram.transfer({ fromPubkey: a.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 })), [a]);
    const socket = new WebSocket(t.net.wsUrl);
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const total = 1_200; // past the per-connection cap of 1,000 live subscriptions
    let answered = 0;
    let notified = 0;
    const errors: unknown[] = [];
    const done = new Promise<void>((resolve) => {
      socket.on('message', (raw) => {
        const message = JSON.parse(raw.toString());
        if (message.error) errors.push(message.error);
        if (message.result !== undefined) answered++;
        if (message.method === 'signatureNotification') notified++;
        if (answered + errors.length === total && notified === answered) resolve();
      });
    });
    for (let id = 0; id < total; id++) socket.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'signatureSubscribe', params: [signature] }));
    await done;
    socket.close();
    expect(errors).toEqual([]);
    expect(notified).toBe(total);
  });
});

describe('bad input gets JSON-RPC errors with the standard codes', () => {
  let t: LocalnetClient;
  beforeAll(async () => {
    t = await localnet();
  });
  afterAll(() => t.close());

  const post = async (body: string) => {
    const response = await fetch(t.net.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return { status: response.status, body: (await response.json()) as any };
  };

  test.each([
    ['not JSON', '{"jsonrpc":', -32700],
    ['not an object', '42', -32600],
    ['no method', '{"jsonrpc":"2.0","id":1}', -32600],
    ['an empty batch', '[]', -32600],
    ['an unknown method', '{"jsonrpc":"2.0","id":1,"method":"getEverything"}', -32601],
    ['a prototype key as method', '{"jsonrpc":"2.0","id":1,"method":"__proto__"}', -32601],
    ['a bad pubkey', '{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["not-a-key"]}', -32602],
    ['a bad encoding', '{"jsonrpc":"2.0","id":1,"method":"getAccountInfo","params":["11111111111111111111111111111111",{"encoding":"hex"}]}', -32602],
    ['bad base64', '{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":["***",{"encoding":"base64"}]}', -32602],
    ['bad base58', '{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":["0OIl"]}', -32602],
    ['an undecodable transaction', '{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":["AAAA",{"encoding":"base64"}]}', -32602],
    ['an unknown tx encoding', '{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":["AAAA",{"encoding":"hex"}]}', -32602],
    ['a negative rent size', '{"jsonrpc":"2.0","id":1,"method":"getMinimumBalanceForRentExemption","params":[-1]}', -32602],
    ['a huge airdrop', '{"jsonrpc":"2.0","id":1,"method":"requestAirdrop","params":["11111111111111111111111111111111",1e300]}', -32602],
    ['a bad memcmp', '{"jsonrpc":"2.0","id":1,"method":"getProgramAccounts","params":["11111111111111111111111111111111",{"filters":[{"memcmp":{"offset":0,"bytes":"0O"}}]}]}', -32602],
  ])('%s', async (_, body, code) => {
    const reply = await post(body);
    expect(reply.status).toBe(200);
    expect(reply.body.error.code).toBe(code);
    expect(typeof reply.body.error.message).toBe('string');
  });

  test('a request line that is no URL gets a 400, and the process lives on', async () => {
    const { port } = new URL(t.net.rpcUrl);
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.end('GET http://[ HTTP/1.1\r\nHost: x\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect((await rpc(t.net.rpcUrl, 'getHealth')).result).toBe('ok');
  });

  test('a malformed subscription filter is refused when subscribing, not when an account changes', async () => {
    const socket = new WebSocket(t.net.wsUrl);
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const reply = new Promise<{ error?: { code: number } }>((resolve) => socket.once('message', (raw) => resolve(JSON.parse(raw.toString()))));
    const filters = [{ dataSize: 82 }, { memcmp: { offset: -1, bytes: 'x' } }];
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'programSubscribe', params: [SystemProgram.programId.toBase58(), { filters }] }));
    expect((await reply).error?.code).toBe(-32602);
    socket.close();
    expect((await rpc(t.net.rpcUrl, 'getProgramAccounts', [SystemProgram.programId.toBase58(), { filters }])).error.code).toBe(-32602);
  });

  test('a batch answers each request in order, and the server keeps serving', async () => {
    const reply = await post('[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"nope"},7]');
    expect(reply.body).toHaveLength(3);
    expect(typeof reply.body[0].result).toBe('number');
    expect(reply.body[1].error.code).toBe(-32601);
    expect(reply.body[2].error.code).toBe(-32600);
    const big = await fetch(t.net.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(2 << 20) });
    expect(big.status).toBe(413);
    expect((await rpc(t.net.rpcUrl, 'getHealth')).result).toBe('ok');
  });
});

function bs58Signature(): string {
  return Keypair.generate().publicKey.toBase58() + Keypair.generate().publicKey.toBase58().slice(0, 20);
}

async function waitForSubscriptions(t: LocalnetClient): Promise<void> {
  // web3.js resolves a subscription id only after the server answered; poll its own state, not the clock.
  const internals = t.connection as unknown as { _subscriptionsByHash: Record<string, { state: string }> };
  for (let i = 0; i < 1000; i++) {
    const states = Object.values(internals._subscriptionsByHash).map((s) => s.state);
    if (states.length > 0 && states.every((s) => s === 'subscribed')) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('subscriptions were never acknowledged');
}
