import { Keypair, PublicKey, Transaction, sendAndConfirmTransaction, type Connection } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, getAssociatedTokenAddressSync, getMint } from '@solana/spl-token';
import { PUMP_SDK, userVolumeAccumulatorPda } from '@pump-fun/pump-sdk';
import { userVolumeAccumulatorPda as poolVolumeAccumulatorPda } from '@pump-fun/pump-swap-sdk';
import type { LedgerEntry } from '@svc/ledger';
import type pg from 'pg';
import { SIGKILL_AFTER_BUY_ENV } from '../../apps/workers/src/treasury';
import { airdrop } from '../support/citizens';
import { CrashRig } from '../support/crash';
import { call } from '../support/http';
import { ledgerEntries } from '../support/ledger';
import type { ChildService } from '../support/spawn';
import { until } from '../support/until';

const SUPPLY = 1_000_000_000_000_000n;

/**
 * The service (`npm start` against a chain of its own, as in production) killed with SIGKILL by the treasury's
 * test hook right after a buyback confirmed and before its burn: the tokens sit in the treasury wallet. The next
 * cycle, in a new process, burns them first; the service token's supply falls by exactly what was bought, and
 * the totals (from the ledger) equal what moved on-chain.
 */
describe('the treasury killed with SIGKILL between buy and burn', () => {
  let rig: CrashRig;
  let sql: pg.Client;
  let connection: Connection;
  let mint: PublicKey;

  const start = (env: Record<string, string>): Promise<ChildService> =>
    rig.startService({
      JUPITER_URL: rig.localnet.url,
      TREASURY_TOKEN_MINT: mint.toBase58(),
      TREASURY_CYCLE_MS: '200',
      OUTBOX_RECOVERY_MS: '200',
      ...env,
    });

  beforeAll(async () => {
    rig = await CrashRig.start('treasury-crash');
    ({ sql, connection } = rig);
    // The service token: a pump coin someone launched elsewhere, named to the service by TREASURY_TOKEN_MINT.
    const launcher = Keypair.generate();
    await airdrop(connection, launcher.publicKey.toBase58(), 1);
    const coin = Keypair.generate();
    mint = coin.publicKey;
    const create = await PUMP_SDK.createV2Instruction({ mint, name: 'Service', symbol: 'SVC', uri: 'https://example.com/svc.json', creator: launcher.publicKey, user: launcher.publicKey, mayhemMode: false });
    await sendAndConfirmTransaction(connection, new Transaction().add(create), [launcher, coin], { commitment: 'confirmed' });
  }, 120_000);

  afterAll(() => rig?.close());

  it('burns on the next cycle what the killed one bought, and the totals stay exact', async () => {
    const first = await start({ [SIGKILL_AFTER_BUY_ENV]: '1' });
    const killed = new Promise<NodeJS.Signals | null>((resolve) => first.child.once('exit', (_code, signal) => resolve(signal)));
    const wallet = (await call(first.url, 'GET', '/api/v1/treasury')).body.wallet as string;
    const treasury = new PublicKey(wallet);
    const account = getAssociatedTokenAddressSync(mint, treasury, true, TOKEN_2022_PROGRAM_ID);
    // The fees the treasury would have received: once it holds SOL above its reserve, its next cycle buys.
    await airdrop(connection, wallet, 2);

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
    // The burn is in the totals once recorded, and its cycle in the log once it finishes; the next empty cycle,
    // 200 ms later, replaces last_cycle in the view, so the cycle is read from the log.
    const burnCycle = await until('the next cycle to burn and finish', 60_000, () =>
      second.output.filter((line) => line.includes('"msg":"treasury cycle"')).map((line) => JSON.parse(line).last_cycle).find((cycle) => cycle.signatures.length > 0),
    50);
    const view = await until('the burn in the totals', 30_000, async () => {
      const body = (await call(base, 'GET', '/api/v1/treasury')).body;
      return body.totals?.burns >= 1 ? body : undefined;
    }, 50);

    // The supply fell by exactly what the killed cycle bought, and the treasury holds none of it.
    expect((await getMint(connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID)).supply).toBe(SUPPLY - held);
    expect((await connection.getTokenAccountBalance(account, 'confirmed')).value.amount).toBe('0');

    const entries = await ledgerEntries(base);
    const treasuryId = entries.find((e) => e.type === 'CitizenRegistered' && e.data.handle === 'treasury')!.actor;
    const actions = entries.filter((e) => e.actor === treasuryId && e.type === 'ActionRecorded');
    expect(actions.map((e) => e.data.action)).toEqual(['buyback', 'burn']);
    const [buyback, burn] = actions as [LedgerEntry, LedgerEntry];
    expect(burn.data.details).toMatchObject({ mint: mint.toBase58(), burned_raw: held.toString(), reason: 'left_over' });
    expect(burnCycle).toMatchObject({ tokens_burned: Number(held) / 1e6, tokens_bought: 0, signatures: [burn.data.signature], skipped_reason: expect.stringContaining('reserve') });

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
