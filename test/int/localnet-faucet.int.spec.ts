import fs from 'node:fs';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { startLocalnet } from '@svc/app-localnet';
import { tempDir } from '../support/env';
import { closeConnection, localnet, type LocalnetClient } from '../support/localnet';

async function airdropConfirmed(connection: Connection, to: PublicKey, lamports: number): Promise<string> {
  const signature = await connection.requestAirdrop(to, lamports);
  const confirmation = await connection.confirmTransaction({ signature, ...(await connection.getLatestBlockhash()) });
  expect(confirmation.value.err).toBeNull();
  return signature;
}

async function landed(connection: Connection, signature: string) {
  const recorded = await connection.getTransaction(signature, { maxSupportedTransactionVersion: 0, commitment: 'confirmed' });
  if (!recorded) throw new Error(`${signature} is not on the chain`);
  return { slot: recorded.slot, blockhash: recorded.transaction.message.recentBlockhash, err: recorded.meta?.err ?? null };
}

/** The slot that issued `blockhash`: each slot's block carries the one the chain handed out during it. */
async function issuedIn(connection: Connection, blockhash: string, notAfter: number): Promise<number> {
  for (let slot = notAfter; slot >= 0; slot--) {
    const block = await connection.getBlock(slot, { maxSupportedTransactionVersion: 0, transactionDetails: 'none', rewards: false });
    if (block?.blockhash === blockhash) return slot;
  }
  throw new Error(`no slot up to ${notAfter} issued ${blockhash}`);
}

function slotAfter(connection: Connection, slot: number): Promise<number> {
  return new Promise((resolve) => {
    const id = connection.onSlotChange((info) => {
      if (info.slot <= slot) return;
      void connection.removeSlotChangeListener(id);
      resolve(info.slot);
    });
  });
}

async function transferOn(connection: Connection, blockhash: string, payer: Keypair, to: PublicKey, lamports: number, lastValidBlockHeight: number): Promise<string> {
  const tx = new Transaction({ recentBlockhash: blockhash, feePayer: payer.publicKey }).add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports }));
  tx.sign(payer);
  const signature = await connection.sendRawTransaction(tx.serialize());
  const confirmation = await connection.confirmTransaction({ signature, blockhash, lastValidBlockHeight });
  expect(confirmation.value.err).toBeNull();
  return signature;
}

describe('the faucet funds every request', () => {
  let t: LocalnetClient;
  beforeAll(async () => {
    t = await localnet();
  });
  afterAll(() => t.close());

  test('the same airdrop twice in a row funds the wallet twice, under two confirmed signatures', async () => {
    const wallet = Keypair.generate().publicKey;
    const first = await airdropConfirmed(t.connection, wallet, LAMPORTS_PER_SOL);
    const second = await airdropConfirmed(t.connection, wallet, LAMPORTS_PER_SOL);

    expect(second).not.toBe(first);
    const statuses = await t.connection.getSignatureStatuses([first, second]);
    expect(statuses.value).toEqual([expect.objectContaining({ err: null, confirmationStatus: 'finalized' }), expect.objectContaining({ err: null, confirmationStatus: 'finalized' })]);
    expect(await t.connection.getBalance(wallet)).toBe(2 * LAMPORTS_PER_SOL);
    // Identical requests differ only by their blockhash, so the second signed a newer one. It may land in the first
    // one's slot: the first can sign a slot's blockhash and land as the next slot begins, as on a validator.
    const [a, b] = await Promise.all([landed(t.connection, first), landed(t.connection, second)]);
    expect(b.blockhash).not.toBe(a.blockhash);
    expect(await issuedIn(t.connection, b.blockhash, b.slot)).toBeGreaterThan(await issuedIn(t.connection, a.blockhash, a.slot));
    expect(b.slot).toBeGreaterThanOrEqual(a.slot);
  });

  test('identical airdrops sent together all land', async () => {
    const wallet = Keypair.generate().publicKey;
    const signatures = await Promise.all([1, 2, 3].map(() => t.connection.requestAirdrop(wallet, LAMPORTS_PER_SOL / 2)));
    const latest = await t.connection.getLatestBlockhash();
    for (const signature of signatures) expect((await t.connection.confirmTransaction({ signature, ...latest })).value.err).toBeNull();

    expect(new Set(signatures).size).toBe(3);
    expect(await t.connection.getBalance(wallet)).toBe(1.5 * LAMPORTS_PER_SOL);
  });
});

describe('a repeated airdrop within one slot', () => {
  let clock = Date.now();
  let t: LocalnetClient;
  beforeAll(async () => {
    t = await localnet({ now: () => clock });
  });
  afterAll(() => t.close());

  test('waits for the next slot and lands there on that slot\'s blockhash, a second transaction', async () => {
    const wallet = Keypair.generate().publicKey;
    const first = await t.connection.requestAirdrop(wallet, LAMPORTS_PER_SOL);
    let settled = false;
    // Called on the chain itself, so the twin is already waiting for a new blockhash when the clock moves.
    const second = t.net.chain.airdrop(wallet, BigInt(LAMPORTS_PER_SOL)).finally(() => (settled = true));
    await t.connection.getSlot();
    expect(settled).toBe(false);
    clock += 1000;

    expect(await second).not.toBe(first);
    const [a, b] = await Promise.all([landed(t.connection, first), landed(t.connection, await second)]);
    expect(b.slot).toBeGreaterThan(a.slot);
    expect(await issuedIn(t.connection, a.blockhash, a.slot)).toBe(a.slot);
    expect(await issuedIn(t.connection, b.blockhash, b.slot)).toBe(b.slot);
    expect([a.err, b.err]).toEqual([null, null]);
    expect(await t.connection.getBalance(wallet)).toBe(2 * LAMPORTS_PER_SOL);
  });
});

describe('blockhashes advance with slots and stay valid for the window', () => {
  let t: LocalnetClient;
  beforeAll(async () => {
    t = await localnet();
  });
  afterAll(() => t.close());

  test('every slot brings a new latest blockhash, and a transaction on one from a few slots ago still lands', async () => {
    const payer = await t.funded(1);
    const old = await t.connection.getLatestBlockhashAndContext();
    const later = await slotAfter(t.connection, old.context.slot + 3);
    const now = await t.connection.getLatestBlockhashAndContext();

    expect(now.context.slot).toBeGreaterThanOrEqual(later);
    expect(now.value.blockhash).not.toBe(old.value.blockhash);
    expect(now.value.lastValidBlockHeight).toBeGreaterThan(old.value.lastValidBlockHeight);
    const slots = Array.from({ length: now.context.slot - old.context.slot + 1 }, (_, i) => old.context.slot + i);
    const blocks = await Promise.all(slots.map((slot) => t.connection.getBlock(slot, { maxSupportedTransactionVersion: 0, transactionDetails: 'none', rewards: false })));
    const hashes = blocks.map((block) => block?.blockhash);
    expect(hashes[0]).toBe(old.value.blockhash);
    expect(hashes.at(-1)).toBe(now.value.blockhash);
    expect(new Set(hashes).size).toBe(slots.length);

    expect((await t.connection.isBlockhashValid(old.value.blockhash)).value).toBe(true);
    const to = Keypair.generate().publicKey;
    const signature = await transferOn(t.connection, old.value.blockhash, payer, to, 1_000_000, old.value.lastValidBlockHeight);
    const recorded = await landed(t.connection, signature);
    expect(recorded.blockhash).toBe(old.value.blockhash);
    expect(recorded.slot).toBeGreaterThan(old.context.slot + 3);
    expect(await t.connection.getBalance(to)).toBe(1_000_000);
  });
});

describe('a restart keeps the blockhash window and issues no blockhash twice', () => {
  const dataDir = tempDir('localnet-faucet');
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  test('after a restart a cached blockhash still lands, new slots bring unseen hashes, and the faucet funds again', async () => {
    const payer = Keypair.generate();
    let net = await startLocalnet({ port: 0, dataDir });
    let connection = new Connection(net.rpcUrl, { commitment: 'confirmed', wsEndpoint: net.wsUrl });
    let cached: Awaited<ReturnType<Connection['getLatestBlockhashAndContext']>>;
    let issued: Set<string>;
    try {
      const funding = [await airdropConfirmed(connection, payer.publicKey, LAMPORTS_PER_SOL), await airdropConfirmed(connection, payer.publicKey, LAMPORTS_PER_SOL)];
      cached = await connection.getLatestBlockhashAndContext();
      issued = new Set([cached.value.blockhash, ...(await Promise.all(funding.map(async (s) => (await landed(connection, s)).blockhash)))]);
    } finally {
      await closeConnection(connection);
      await net.close();
    }

    net = await startLocalnet({ port: 0, dataDir });
    connection = new Connection(net.rpcUrl, { commitment: 'confirmed', wsEndpoint: net.wsUrl });
    try {
      expect(await connection.getBalance(payer.publicKey)).toBe(2 * LAMPORTS_PER_SOL);
      const to = Keypair.generate().publicKey;
      const signature = await transferOn(connection, cached.value.blockhash, payer, to, 1_000_000, cached.value.lastValidBlockHeight);
      expect((await landed(connection, signature)).blockhash).toBe(cached.value.blockhash);

      await slotAfter(connection, cached.context.slot);
      const fresh = await connection.getLatestBlockhashAndContext();
      expect(fresh.context.slot).toBeGreaterThan(cached.context.slot);
      expect(issued.has(fresh.value.blockhash)).toBe(false);
      await airdropConfirmed(connection, payer.publicKey, LAMPORTS_PER_SOL);
      expect(await connection.getBalance(payer.publicKey)).toBe(3 * LAMPORTS_PER_SOL - 1_000_000 - 5000);
    } finally {
      await closeConnection(connection);
      await net.close();
    }
  });
});
