import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Keypair, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { ACCOUNT_SIZE, AccountLayout, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { PUMP_SDK } from '@pump-fun/pump-sdk';
import type { LocalChain, TransactionRecord } from '../chain/localChain';
import { bondingCurvePda, canonicalPoolPda, GLOBAL, PUMP_PROGRAM_ID } from '../programs/pump/addresses';
import { decodeType, eventDiscriminator } from '../programs/pump/codec';
import { decodeBondingCurve, decodeGlobal, isAccount } from '../programs/pump/state';

/**
 * The localnet's stand-in for pump's migration service: a sandbox key (derived from a fixed label, like the
 * faucet's) that signs and pays for `migrate`. The emulated `migrate`, like the IDL, lets any signer move a complete
 * curve; Global's withdraw authority (mainnet's, whose key nobody here holds) only receives what is left of the fee.
 */
export const MIGRATOR = Keypair.fromSeed(createHash('sha256').update('localnet pump migrator').digest());

/** The migrator pays two token accounts' rent and a fee per migration; it is topped up from the faucet below this. */
const MIGRATOR_FLOOR = 1n * BigInt(LAMPORTS_PER_SOL);
const MIGRATOR_TOP_UP = 10n * BigInt(LAMPORTS_PER_SOL);

export interface Migration {
  mint: PublicKey;
  pool: PublicKey;
  /** The landed `migrate`; null when it happened before this keeper started and has left the chain's history. */
  signature: string | null;
}

const COMPLETE = eventDiscriminator('CompleteEvent');
const MIGRATED = eventDiscriminator('CompletePumpAmmMigrationEvent');
const PUMP_ID = PUMP_PROGRAM_ID.toBase58();
const DATA_PREFIX = 'Program data: ';

/** The pump events a landed transaction logged, as discriminator-tagged bodies. */
function* pumpEvents(record: TransactionRecord): Generator<{ tag: Buffer; body: Buffer }> {
  if (record.meta.err || !record.accountKeys.includes(PUMP_ID)) return;
  for (const line of record.meta.logMessages) {
    if (!line.startsWith(DATA_PREFIX)) continue;
    const bytes = Buffer.from(line.slice(DATA_PREFIX.length), 'base64');
    if (bytes.length >= 8) yield { tag: bytes.subarray(0, 8), body: bytes.subarray(8) };
  }
}

/**
 * Graduates pump coins as pump's migrator does on mainnet: when a buy completes a bonding curve (it logs a
 * CompleteEvent), the keeper sends the real `migrate` in a later slot, moving the curve into its canonical PumpSwap
 * pool. At start it also migrates every complete curve it finds unmigrated (a restart, or a chain that ran without
 * it). Migrations run one at a time, in the order the curves completed.
 *
 * `whenMigrated(mint)` resolves once a coin's pool exists, whoever migrated it; `idle()` once nothing is pending.
 * Each migration is also announced as a `migrated` event.
 */
export class GraduationKeeper extends EventEmitter<{ migrated: [Migration] }> {
  private readonly scheduled = new Set<string>();
  private queue: Promise<void> = Promise.resolve();
  private readonly stopping = new AbortController();
  private readonly listener = (record: TransactionRecord) => this.observe(record);

  constructor(
    private readonly chain: LocalChain,
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    super();
    this.setMaxListeners(0);
    chain.on('transaction', this.listener);
    for (const mint of this.unmigratedCurves()) this.schedule(mint, chain.slot);
  }

  /** Resolves when `mint`'s curve has moved into its pool (at once if it already has); rejects if the keeper stops first. */
  whenMigrated(mint: PublicKey): Promise<Migration> {
    const done = this.migrationOf(mint);
    if (done) return Promise.resolve(done);
    return new Promise((resolve, reject) => {
      const stop = () => {
        this.off('migrated', onMigrated);
        reject(new Error('the graduation keeper stopped'));
      };
      const onMigrated = (migration: Migration) => {
        if (!migration.mint.equals(mint)) return;
        this.off('migrated', onMigrated);
        this.stopping.signal.removeEventListener('abort', stop);
        resolve(migration);
      };
      if (this.stopping.signal.aborted) return stop();
      this.on('migrated', onMigrated);
      this.stopping.signal.addEventListener('abort', stop, { once: true });
    });
  }

  /** Resolves once every migration scheduled so far has landed or failed. */
  idle(): Promise<void> {
    return this.queue;
  }

  async close(): Promise<void> {
    this.chain.off('transaction', this.listener);
    this.stopping.abort(new Error('the graduation keeper stopped'));
    await this.queue;
  }

  private observe(record: TransactionRecord): void {
    for (const { tag, body } of pumpEvents(record)) {
      if (tag.equals(COMPLETE)) {
        this.schedule(decodeType<{ mint: PublicKey }>('CompleteEvent', body).mint, record.slot);
      } else if (tag.equals(MIGRATED)) {
        const event = decodeType<{ mint: PublicKey; pool: PublicKey }>('CompletePumpAmmMigrationEvent', body);
        this.emit('migrated', { mint: event.mint, pool: event.pool, signature: record.signature });
      }
    }
  }

  private schedule(mint: PublicKey, completedIn: number): void {
    const id = mint.toBase58();
    if (this.scheduled.has(id) || this.stopping.signal.aborted) return;
    this.scheduled.add(id);
    this.queue = this.queue.then(() => this.migrate(mint, completedIn)).finally(() => this.scheduled.delete(id));
  }

  private async migrate(mint: PublicKey, completedIn: number): Promise<void> {
    try {
      // A slot later, as mainnet's migrator lands some slots after the buy that completed the curve.
      await this.chain.untilSlot(completedIn + 1, this.stopping.signal);
      if (!this.awaitsMigration(mint)) return;
      const mintAccount = this.chain.account(mint);
      const global = this.chain.account(GLOBAL);
      if (!mintAccount || !global) return;
      await this.fundMigrator();
      const instruction = await PUMP_SDK.migrateInstruction({
        withdrawAuthority: decodeGlobal(global.data).withdrawAuthority,
        mint,
        user: MIGRATOR.publicKey,
        tokenProgram: mintAccount.owner,
      });
      if (!this.awaitsMigration(mint)) return;
      await this.chain.sendAsLocalnet([instruction], [MIGRATOR]);
    } catch (error) {
      if (this.stopping.signal.aborted) return;
      // Someone else's migrate may have landed first; that is the outcome wanted, not a fault.
      if (!this.awaitsMigration(mint)) return;
      this.onError(new Error(`the graduation keeper could not migrate ${mint.toBase58()}: ${(error as Error).message}`, { cause: error }));
    }
  }

  private async fundMigrator(): Promise<void> {
    const held = this.chain.account(MIGRATOR.publicKey)?.lamports ?? 0n;
    if (held < MIGRATOR_FLOOR) await this.chain.airdrop(MIGRATOR.publicKey, MIGRATOR_TOP_UP);
  }

  /** A complete curve still holding its reserves: `migrate` zeroes the virtual reserves of the curves it moves. */
  private awaitsMigration(mint: PublicKey): boolean {
    const account = this.chain.account(bondingCurvePda(mint));
    if (!account?.owner.equals(PUMP_PROGRAM_ID) || !isAccount('BondingCurve', account.data)) return false;
    const curve = decodeBondingCurve(account.data);
    return curve.complete && curve.virtualTokenReserves > 0n;
  }

  private migrationOf(mint: PublicKey): Migration | null {
    const account = this.chain.account(bondingCurvePda(mint));
    if (!account?.owner.equals(PUMP_PROGRAM_ID) || !isAccount('BondingCurve', account.data)) return null;
    const curve = decodeBondingCurve(account.data);
    if (!curve.complete || curve.virtualTokenReserves > 0n) return null;
    const pool = canonicalPoolPda(mint);
    if (!this.chain.account(pool)) return null;
    // The first transaction that touched the pool created it: the migration.
    return { mint, pool, signature: this.chain.signaturesFor(pool.toBase58())[0]?.signature ?? null };
  }

  /**
   * Mints of complete curves that still hold their reserves. A curve does not record its mint, but its token
   * account does: the associated token account the curve owns, at the address derived from both.
   */
  private unmigratedCurves(): PublicKey[] {
    const curves = new Set<string>();
    for (const { pubkey, account } of this.chain.programAccounts(PUMP_PROGRAM_ID)) {
      if (!isAccount('BondingCurve', account.data)) continue;
      const curve = decodeBondingCurve(account.data);
      if (curve.complete && curve.virtualTokenReserves > 0n) curves.add(pubkey.toBuffer().toString('hex'));
    }
    if (curves.size === 0) return [];
    const mints: PublicKey[] = [];
    for (const program of [TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID]) {
      for (const { account } of this.chain.programAccounts(program)) {
        if (account.data.length < ACCOUNT_SIZE) continue;
        const owner = account.data.subarray(32, 64).toString('hex');
        if (!curves.has(owner)) continue;
        const mint = AccountLayout.decode(account.data.subarray(0, ACCOUNT_SIZE)).mint;
        if (bondingCurvePda(mint).toBuffer().toString('hex') !== owner) continue;
        curves.delete(owner);
        mints.push(mint);
      }
    }
    return mints;
  }
}
