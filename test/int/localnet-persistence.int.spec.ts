import { AddressLookupTableProgram, Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction, TransactionInstruction, sendAndConfirmTransaction } from '@solana/web3.js';
import {
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountInstruction,
  createInitializeMint2Instruction,
  createMint,
  getAccount,
  getAssociatedTokenAddressSync,
  getOrCreateAssociatedTokenAccount,
  mintTo,
} from '@solana/spl-token';
import type { ChildService } from '../support/spawn';
import { tempDir } from '../support/env';
import { closeConnection, fundedKeypair, startLocalnetChild } from '../support/localnet';
import { LocalChain } from '../../apps/localnet/src/chain/localChain';
import fs from 'node:fs';
import net from 'node:net';
import { startBundledLocalnet } from '@svc/app-localnet';
import path from 'node:path';

interface Running {
  service: ChildService;
  connection: Connection;
}

async function startLocalnetProcess(dataDir: string): Promise<Running> {
  const service = await startLocalnetChild(dataDir);
  return { service, connection: new Connection(service.url, { commitment: 'confirmed', wsEndpoint: service.wsUrl }) };
}

describe('the local chain survives restarts and crashes with every acknowledged transaction', () => {
  const dataDir = tempDir('localnet-persist');
  let running: Running | undefined;
  afterEach(async () => {
    if (!running) return;
    await closeConnection(running.connection);
    await running.service.stop();
    running = undefined;
  });

  test('SIGKILL after confirmed transfers, then a graceful restart, keeps balances, token accounts and history', async () => {
    running = await startLocalnetProcess(dataDir);
    let { connection } = running;
    const payer = await fundedKeypair(connection, 20);
    const receivers = Array.from({ length: 12 }, () => Keypair.generate().publicKey);
    let last = '';
    for (const [i, to] of receivers.entries()) {
      last = await sendAndConfirmTransaction(connection, new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: (i + 1) * 1_000_000 })), [payer]);
    }
    // A lookup table names a recent slot, here one in which nothing landed; a replay must find it in SlotHashes again.
    await slotAfter(connection, await connection.getSlot());
    const recentSlot = await connection.getSlot();
    await slotAfter(connection, recentSlot);
    const [createTable, table] = AddressLookupTableProgram.createLookupTable({ authority: payer.publicKey, payer: payer.publicKey, recentSlot });
    await sendAndConfirmTransaction(connection, new Transaction().add(createTable), [payer]);
    const mint = await createMint(connection, payer, payer.publicKey, null, 6);
    const tokens = await getOrCreateAssociatedTokenAccount(connection, payer, mint, payer.publicKey);
    await mintTo(connection, payer, mint, tokens.address, payer, 123_456n);
    const expected = await balances(connection, [payer.publicKey, ...receivers]);

    await closeConnection(connection);
    await running.service.kill();

    running = await startLocalnetProcess(dataDir);
    connection = running.connection;
    expect(await balances(connection, [payer.publicKey, ...receivers])).toEqual(expected);
    expect((await getAccount(connection, tokens.address)).amount).toBe(123_456n);
    expect((await connection.getAddressLookupTable(table)).value?.state.authority?.equals(payer.publicKey)).toBe(true);
    const recorded = await connection.getTransaction(last, { maxSupportedTransactionVersion: 0 });
    expect(recorded?.meta?.postBalances[1]).toBe(12_000_000);
    // The chain goes on: the restored programs execute (a mint), a fresh blockhash, a new transfer.
    await mintTo(connection, payer, mint, tokens.address, payer, 1n);
    expect((await getAccount(connection, tokens.address)).amount).toBe(123_457n);
    await sendAndConfirmTransaction(connection, new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: receivers[0], lamports: 1 })), [payer]);
    const after = await balances(connection, [payer.publicKey, receivers[0]]);

    await closeConnection(connection);
    await running.service.stop();
    running = await startLocalnetProcess(dataDir);
    expect(await balances(running.connection, [payer.publicKey, receivers[0]])).toEqual(after);
    expect(after[1]).toBe(1_000_001);
  }, 60_000);
});

function slotAfter(connection: Connection, slot: number): Promise<void> {
  return new Promise((resolve) => {
    const id = connection.onSlotChange((info) => {
      if (info.slot <= slot) return;
      void connection.removeSlotChangeListener(id);
      resolve();
    });
  });
}

async function balances(connection: Connection, keys: PublicKey[]): Promise<number[]> {
  return (await connection.getMultipleAccountsInfo(keys)).map((a) => a?.lamports ?? 0);
}

describe('the chain files have one writer, and a torn log loses only the unacknowledged write', () => {
  test('a second process on the same DATA_DIR refuses to start', async () => {
    const dataDir = tempDir('localnet-lock');
    const first = await startLocalnetProcess(dataDir);
    try {
      await expect(startLocalnetProcess(dataDir)).rejects.toThrow(/in use by process \d+/);
    } finally {
      await closeConnection(first.connection);
      await first.service.stop();
    }
  }, 60_000);

  test('a port already in use is refused with a message naming the variables to set', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      await expect(startBundledLocalnet({ port, dataDir: null, solUsd: 150 })).rejects.toThrow(/LOCALNET_PORT.*SOLANA_RPC_URL/);
    } finally {
      blocker.close();
    }
  });

  test('a torn last line is cut off, so later transactions are not glued to it and lost', async () => {
    const dataDir = tempDir('localnet-torn');
    const send = async (chain: LocalChain, payer: Keypair, to: PublicKey) => {
      const tx = new Transaction({ recentBlockhash: chain.latestBlockhash().blockhash, feePayer: payer.publicKey }).add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1_000_000 }));
      tx.sign(payer);
      return chain.send(tx.serialize());
    };
    const payer = Keypair.generate();
    const [a, b] = [Keypair.generate().publicKey, Keypair.generate().publicKey];
    let chain = await LocalChain.open({ dataDir, programs: [] });
    await chain.airdrop(payer.publicKey, 10n * BigInt(LAMPORTS_PER_SOL));
    await send(chain, payer, a);
    // A crash in the middle of an append leaves half a line behind.
    const log = path.join(dataDir, 'localnet', fs.readdirSync(path.join(dataDir, 'localnet')).find((f) => f.startsWith('wal-'))!);
    fs.appendFileSync(log, '{"wire":"AQID');
    chain = await LocalChain.open({ dataDir, programs: [] });
    expect(chain.account(a)?.lamports).toBe(1_000_000n);
    await send(chain, payer, b);
    chain = await LocalChain.open({ dataDir, programs: [] });
    expect(chain.account(b)?.lamports).toBe(1_000_000n);
    await chain.close();
  });
});

describe('snapshots taken under concurrent load lose nothing', () => {
  test('concurrent transfers across many log rotations, reopened without a clean close and again after one', async () => {
    const dataDir = tempDir('localnet-rotate');
    const chain = await LocalChain.open({ dataDir, programs: [], snapshotEvery: 7 });
    const payers = await Promise.all(Array.from({ length: 8 }, async () => {
      const payer = Keypair.generate();
      await chain.airdrop(payer.publicKey, 10n * BigInt(LAMPORTS_PER_SOL));
      return payer;
    }));
    const to = Keypair.generate().publicKey;
    const { blockhash } = chain.latestBlockhash();
    let lamports = 1_000_000;
    const signatures = await Promise.all(
      Array.from({ length: 120 }, (_, i) => {
        const payer = payers[i % payers.length];
        const tx = new Transaction({ recentBlockhash: blockhash, feePayer: payer.publicKey }).add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: lamports++ }));
        tx.sign(payer);
        return chain.send(tx.serialize());
      }),
    );
    const expected = [to, ...payers.map((p) => p.publicKey)].map((key) => chain.account(key)?.lamports);
    // No close(): the second instance must rebuild from whatever snapshot and logs the first left behind. A
    // dead process writes nothing after its death, so the first one's background snapshot is let finish
    // rather than left to race the second instance over the same files.
    await (chain as unknown as { store?: { settled(): Promise<void> } }).store?.settled();
    const reopened = await LocalChain.open({ dataDir, programs: [], snapshotEvery: 7 });
    expect([to, ...payers.map((p) => p.publicKey)].map((key) => reopened.account(key)?.lamports)).toEqual(expected);
    expect(reopened.record(signatures[119])?.meta.err).toBeNull();
    // A clean close snapshots with an empty log after it, so the history read back is the meta file's alone:
    // 128 records, more than one slice of its JSON.
    await reopened.close();
    const fromMeta = await LocalChain.open({ dataDir, programs: [], snapshotEvery: 7 });
    expect(signatures.filter((signature) => fromMeta.record(signature)?.meta.err !== null)).toEqual([]);
    await fromMeta.close();
  });
});

describe('a snapshot keeps the history it holds as the RPC reported it', () => {
  test('inner instructions are kept in base64, unencoded, and read back after a restart as they were', async () => {
    const dataDir = tempDir('localnet-inner');
    let chain = await LocalChain.open({ dataDir, programs: [] });
    const payer = Keypair.generate();
    const mint = Keypair.generate();
    await chain.airdrop(payer.publicKey, 10n * BigInt(LAMPORTS_PER_SOL));
    const send = (instructions: TransactionInstruction[], signers: Keypair[]) => {
      const tx = new Transaction({ recentBlockhash: chain.latestBlockhash().blockhash, feePayer: payer.publicKey }).add(...instructions);
      tx.sign(...signers);
      return chain.send(tx.serialize());
    };
    await send(
      [
        SystemProgram.createAccount({ fromPubkey: payer.publicKey, newAccountPubkey: mint.publicKey, lamports: LAMPORTS_PER_SOL / 100, space: MINT_SIZE, programId: TOKEN_PROGRAM_ID }),
        createInitializeMint2Instruction(mint.publicKey, 6, payer.publicKey, null),
      ],
      [payer, mint],
    );
    const ata = getAssociatedTokenAddressSync(mint.publicKey, payer.publicKey);
    // The associated-token program creates the account through CPIs to the system and token programs.
    const signature = await send([createAssociatedTokenAccountInstruction(payer.publicKey, ata, payer.publicKey, mint.publicKey)], [payer]);
    const inner = chain.record(signature)!.meta.innerInstructions;
    expect(inner.flatMap((list) => list.instructions).length).toBeGreaterThan(1);
    const reported = JSON.parse(JSON.stringify(inner));
    await chain.close();

    const dir = path.join(dataDir, 'localnet');
    const meta = JSON.parse(fs.readFileSync(path.join(dir, fs.readdirSync(dir).find((f) => f.startsWith('meta-'))!), 'utf8'));
    const stored = meta.records.find((r: { signature: string }) => r.signature === signature);
    for (const entry of stored.meta.innerInstructions.flatMap((list: { instructions: unknown[] }) => list.instructions)) {
      expect(entry).toEqual(expect.objectContaining({ data64: expect.any(String) }));
      expect(entry).not.toHaveProperty('data');
    }

    chain = await LocalChain.open({ dataDir, programs: [] });
    expect(JSON.parse(JSON.stringify(chain.record(signature)!.meta.innerInstructions))).toEqual(reported);
    await chain.close();
  });
});

describe('history is bounded, the duplicate check is not', () => {
  test('a kept transaction holds bytes of its own, not a slice of the shared buffer pool it arrived in', async () => {
    const chain = await LocalChain.open({ dataDir: null, programs: [] });
    const payer = Keypair.generate();
    await chain.airdrop(payer.publicKey, 10n * BigInt(LAMPORTS_PER_SOL));
    const tx = new Transaction({ recentBlockhash: chain.latestBlockhash().blockhash, feePayer: payer.publicKey }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
    );
    tx.sign(payer);
    // Decoded as the RPC decodes a request's transaction: a small buffer comes out of node's pool.
    const wire = Buffer.from(tx.serialize().toString('base64'), 'base64');
    expect(wire.buffer.byteLength).toBeGreaterThan(wire.length);
    const kept = chain.record(await chain.send(wire))!.wire;
    expect(kept.equals(wire)).toBe(true);
    expect(kept.buffer.byteLength).toBe(wire.length);
    await chain.close();
  });

  test('evicted transactions leave every index, and a resend of one is still AlreadyProcessed', async () => {
    const chain = await LocalChain.open({ dataDir: null, programs: [], historyLimit: 4 });
    const payer = Keypair.generate();
    await chain.airdrop(payer.publicKey, 10n * BigInt(LAMPORTS_PER_SOL));
    const { blockhash } = chain.latestBlockhash();
    const receivers = Array.from({ length: 6 }, () => Keypair.generate().publicKey);
    const wires = receivers.map((to) => {
      const tx = new Transaction({ recentBlockhash: blockhash, feePayer: payer.publicKey }).add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1_000_000 }));
      tx.sign(payer);
      return tx.serialize();
    });
    const signatures: string[] = [];
    for (const wire of wires) signatures.push(await chain.send(wire));
    expect(chain.record(signatures[0])).toBeUndefined();
    expect(chain.signaturesFor(receivers[0].toBase58())).toEqual([]);
    expect(chain.signaturesFor(receivers[5].toBase58()).map((r) => r.signature)).toEqual([signatures[5]]);
    await expect(chain.send(wires[0])).rejects.toThrow(/already been processed/);
    expect(await chain.send(wires[0], { skipPreflight: true })).toBe(signatures[0]);
    expect(chain.account(receivers[0])?.lamports).toBe(1_000_000n);
    await chain.close();
  });
});
