import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction, sendAndConfirmTransaction } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, getAssociatedTokenAddressSync, getMint } from '@solana/spl-token';
import { PUMP_SDK, userVolumeAccumulatorPda } from '@pump-fun/pump-sdk';
import { userVolumeAccumulatorPda as poolVolumeAccumulatorPda } from '@pump-fun/pump-swap-sdk';
import type { LedgerEntry } from '@svc/ledger';
import pg from 'pg';
import { SIGKILL_AFTER_BUY_ENV } from '../../apps/workers/src/treasury';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';
import { call } from '../support/http';
import { closeConnection } from '../support/localnet';
import { startChild, type ChildService } from '../support/spawn';

const SUPPLY = 1_000_000_000_000_000n;

async function until<T>(what: string, deadlineMs: number, probe: () => Promise<T | undefined>, everyMs = 50): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

function listenOn(port: number): Promise<net.Server | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** Two free consecutive ports: the chain's JSON-RPC and, as every Solana client assumes, its WebSocket on the next one. */
async function freePortPair(): Promise<number> {
  for (;;) {
    const first = (await listenOn(0))!;
    const port = (first.address() as net.AddressInfo).port;
    const second = port < 65535 ? await listenOn(port + 1) : undefined;
    await Promise.all([first, second].map((s) => s && new Promise((resolve) => s.close(resolve))));
    if (second) return port;
  }
}

/**
 * The service (`npm start` against a chain of its own, as in production) killed with SIGKILL by the treasury's
 * test hook right after a buyback confirmed and before its burn: the tokens sit in the treasury wallet. The next
 * cycle, in a new process, burns them first; the service token's supply falls by exactly what was bought, and
 * the totals (from the ledger) equal what moved on-chain.
 */
describe('the treasury killed with SIGKILL between buy and burn', () => {
  const masterKey = randomBytes(32).toString('base64');
  const dataDir = tempDir('treasury-crash');
  const children: ChildService[] = [];
  let db: FreshDatabase;
  let sql: pg.Client;
  let localnet: ChildService;
  let connection: Connection;
  let mint: PublicKey;

  const start = (env: Record<string, string>): Promise<ChildService> =>
    startChild('scripts/start.ts', [], {
      DATABASE_URL: db.url,
      EVENTSTORE_URL: '',
      REDIS_URL: '',
      SERVICE_MASTER_KEY: masterKey,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      SOLANA_RPC_URL: localnet.url,
      PRICE_URL: localnet.url,
      JUPITER_URL: localnet.url,
      LOG_LEVEL: 'info',
      TREASURY_TOKEN_MINT: mint.toBase58(),
      TREASURY_CYCLE_MS: '200',
      OUTBOX_RECOVERY_MS: '200',
      ...env,
    }).then((child) => {
      children.push(child);
      return child;
    });

  beforeAll(async () => {
    db = await freshDatabase('treasury_crash');
    localnet = await startChild('apps/localnet/src/main.ts', [], { DATA_DIR: tempDir('treasury-crash-chain'), LOCALNET_PORT: String(await freePortPair()), LOG_LEVEL: 'info' }, 'localnet listening');
    children.push(localnet);
    connection = new Connection(localnet.url, 'confirmed');
    // The service token: a pump coin someone launched elsewhere, named to the service by TREASURY_TOKEN_MINT.
    const launcher = Keypair.generate();
    const funded = await connection.requestAirdrop(launcher.publicKey, LAMPORTS_PER_SOL);
    await connection.confirmTransaction({ signature: funded, ...(await connection.getLatestBlockhash()) }, 'confirmed');
    const coin = Keypair.generate();
    mint = coin.publicKey;
    const create = await PUMP_SDK.createV2Instruction({ mint, name: 'Service', symbol: 'SVC', uri: 'https://example.com/svc.json', creator: launcher.publicKey, user: launcher.publicKey, mayhemMode: false });
    await sendAndConfirmTransaction(connection, new Transaction().add(create), [launcher, coin], { commitment: 'confirmed' });
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  }, 120_000);

  afterAll(async () => {
    for (const child of children) {
      if (child.child.exitCode === null && child.child.signalCode === null) {
        const exited = new Promise((resolve) => child.child.once('exit', resolve));
        child.child.kill('SIGKILL');
        await exited;
      }
    }
    if (connection) await closeConnection(connection);
    await sql?.end().catch(() => undefined);
    await db?.drop();
  });

  it('burns on the next cycle what the killed one bought, and the totals stay exact', async () => {
    const first = await start({ [SIGKILL_AFTER_BUY_ENV]: '1' });
    const killed = new Promise<NodeJS.Signals | null>((resolve) => first.child.once('exit', (_code, signal) => resolve(signal)));
    const wallet = (await call(first.url, 'GET', '/api/v1/treasury')).body.wallet as string;
    const treasury = new PublicKey(wallet);
    const account = getAssociatedTokenAddressSync(mint, treasury, true, TOKEN_2022_PROGRAM_ID);
    // The fees the treasury would have received: once it holds SOL above its reserve, its next cycle buys.
    const funded = await connection.requestAirdrop(treasury, 2 * LAMPORTS_PER_SOL);
    await connection.confirmTransaction({ signature: funded, ...(await connection.getLatestBlockhash()) }, 'confirmed');

    expect(await killed).toBe('SIGKILL');
    const held = BigInt((await connection.getTokenAccountBalance(account, 'confirmed')).value.amount);
    expect(held).toBeGreaterThan(0n);
    expect((await getMint(connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID)).supply).toBe(SUPPLY);
    // Its only cycles that finished were those before the airdrop, which had nothing to buy with.
    const finished = first.output.filter((line) => line.includes('"msg":"treasury cycle"')).map((line) => JSON.parse(line).last_cycle);
    expect(finished.every((cycle) => cycle.signatures.length === 0)).toBe(true);

    // The dead process held the cycle's lease; nobody else is working on it, so it ends now.
    await sql.query(`update treasury.cycles set lease_until = now()`);
    const second = await start({});
    const base = second.url;
    const view = await until('the next cycle to burn', 60_000, async () => {
      const body = (await call(base, 'GET', '/api/v1/treasury')).body;
      return body.totals?.burns >= 1 ? body : undefined;
    });

    // The supply fell by exactly what the killed cycle bought, and the treasury holds none of it.
    expect((await getMint(connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID)).supply).toBe(SUPPLY - held);
    expect((await connection.getTokenAccountBalance(account, 'confirmed')).value.amount).toBe('0');

    const entries: LedgerEntry[] = (await call(base, 'GET', '/api/v1/changes?after=-1&limit=1000')).body.changes;
    const treasuryId = entries.find((e) => e.type === 'CitizenRegistered' && e.data.handle === 'treasury')!.actor;
    const actions = entries.filter((e) => e.actor === treasuryId && e.type === 'ActionRecorded');
    expect(actions.map((e) => e.data.action)).toEqual(['buyback', 'burn']);
    const [buyback, burn] = actions as [LedgerEntry, LedgerEntry];
    expect(burn.data.details).toMatchObject({ mint: mint.toBase58(), burned_raw: held.toString(), reason: 'left_over' });
    expect(view.last_cycle).toMatchObject({ tokens_burned: Number(held) / 1e6, tokens_bought: 0, signatures: [burn.data.signature], skipped_reason: expect.stringContaining('reserve') });

    // The totals are the chain's: what the buy delivered and cost, and what the burn destroyed.
    const tx = (await connection.getTransaction(buyback.data.signature as string, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }))!;
    const keys = tx.transaction.message.getAccountKeys({ accountKeysFromLookups: tx.meta!.loadedAddresses }).keySegments().flat();
    const at = (key: PublicKey) => keys.findIndex((k) => k.equals(key));
    const opened = [account, userVolumeAccumulatorPda(treasury), poolVolumeAccumulatorPda(treasury)]
      .map(at)
      .filter((i) => i >= 0 && tx.meta!.preBalances[i] === 0)
      .reduce((sum, i) => sum + BigInt(tx.meta!.postBalances[i]!), 0n);
    const spent = BigInt(tx.meta!.preBalances[at(treasury)]!) - BigInt(tx.meta!.postBalances[at(treasury)]!) - BigInt(tx.meta!.fee) - opened;
    expect(view.totals).toMatchObject({
      tokens_bought_raw: held.toString(),
      tokens_burned_raw: held.toString(),
      sol_spent_lamports: spent.toString(),
      buybacks: 1,
      burns: 1,
    });
    expect((await call(base, 'GET', '/api/v1/attest')).body).toMatchObject({ ok: true, verified: { ok: true } });
  }, 180_000);
});
