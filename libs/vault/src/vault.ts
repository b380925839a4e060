import { Batcher, execAll, migrate, type Liveness, type Migration, type SqlDatabase } from '@svc/readmodel';
import { sql, type Kysely } from 'kysely';
import { apiKeyId, hashApiKey, sameHash } from './crypto';
import { KeyCache } from './keyCache';
import { Keyring } from './keyring';
import { FaucetGrants } from './faucetGrants';
import { IdempotencyStore, type IdempotencyTuning } from './idempotency';
import { MemoryStore } from './memory';

const migrations: Migration[] = [
  {
    name: '001_credentials',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.credentials (
           agent_id text primary key,
           key_hash text not null unique,
           created_at timestamptz not null default now(),
           rotated_at timestamptz)`,
        `create table ${schema}.wallet_secrets (agent_id text primary key, sealed text not null)`,
        `create table ${schema}.inbox_cursors (agent_id text primary key, at bigint not null)`,
      ]),
  },
  {
    name: '002_key_ids',
    up: (db, schema) =>
      execAll(db, [
        `alter table ${schema}.credentials add column key_id text`,
        `create unique index credentials_key_id on ${schema}.credentials (key_id)`,
      ]),
  },
  {
    name: '003_inbox_cursor_seq',
    up: (db, schema) => execAll(db, [`alter table ${schema}.inbox_cursors add column seq bigint`]),
  },
];

/**
 * An inbox cursor: everything at or before it has been seen. With `seq`, it is exact: the items up to that
 * ledger entry (stamped `at`). Without, it is a time: the items up to `at` ms.
 */
export interface InboxCursor {
  at: number;
  seq: number | null;
}

export interface NewCredential {
  agentId: string;
  apiKey: string;
  /** The wallet's 64-byte secret key (service custody only). */
  walletSecret?: Uint8Array;
}

/** Sealed custody secrets a process keeps: far more than the citizens trading at once. */
const SEALED_WALLETS_KEPT = 50_000;

/**
 * Private primary data: hashed API keys, sealed wallet secrets, inbox cursors, memory notes and faucet grants. Written
 * by the command side, read by no public endpoint, never touched by a projection rebuild.
 */
export class Vault {
  private readonly credentialWrites: Batcher<NewCredential>;
  /** Notes sealed with a data key that only the citizen's current API key unwraps. */
  readonly memory: MemoryStore;
  /** Idempotency-Key rows: who holds a key, and the sealed reply a retry gets. */
  readonly idempotency: IdempotencyStore;
  /** The test SOL each citizen took from the faucet within the last hour, in flight included. */
  readonly faucet: FaucetGrants;

  private readonly keys: Keyring;
  /** Keys verified by this process; a rotation anywhere is heard on `rotations` and forgets the old key. */
  private readonly verified = new KeyCache();
  private readonly rotations: string;
  /**
   * Custody secrets as stored, sealed: a signed action then reads no row before signing. A wallet's secret never
   * changes; a rekey seals it again under the new master key, and the old key, which this process holds until
   * it restarts, still opens what is kept here. Only sealed bytes are kept; each signing unseals its own copy.
   */
  private readonly sealedWallets = new Map<string, string>();

  constructor(
    private readonly database: SqlDatabase,
    masterKey: Buffer | Keyring,
    private readonly schema = 'vault',
    options: { liveness?: Liveness; idempotency?: Partial<IdempotencyTuning> } = {},
  ) {
    this.keys = Keyring.of(masterKey);
    this.rotations = `${schema}_key_rotated`;
    this.credentialWrites = new Batcher((items) => this.insertCredentials(items));
    this.memory = new MemoryStore(database, schema);
    this.idempotency = new IdempotencyStore(database, this.keys, { schema, liveness: options.liveness, tuning: options.idempotency });
    this.faucet = new FaucetGrants(database, schema);
  }

  async init(): Promise<this> {
    await migrate(this.database.db, this.schema, migrations);
    await this.memory.init();
    await this.idempotency.init();
    await this.faucet.init();
    await this.database.listen(
      this.rotations,
      (agentId) => this.verified.rotated(agentId),
      (listening) => this.verified.setListening(listening),
    );
    return this;
  }

  private table(name: string): string {
    return `${this.schema}.${name}`;
  }

  /** Stores the key hash and sealed secret; concurrent registrations share one round trip. */
  addCredential(credential: NewCredential): Promise<void> {
    return this.credentialWrites.add(credential);
  }

  private async insertCredentials(items: NewCredential[]): Promise<void> {
    await this.database.db.transaction().execute(async (trx) => {
      await trx
        .insertInto(this.table('credentials'))
        .values(items.map((c) => ({ agent_id: c.agentId, key_id: apiKeyId(c.apiKey), key_hash: hashApiKey(c.apiKey) })))
        .execute();
      const secrets = items.filter((c) => c.walletSecret);
      if (secrets.length > 0) {
        await trx
          .insertInto(this.table('wallet_secrets'))
          .values(secrets.map((c) => ({ agent_id: c.agentId, sealed: this.keys.seal('wallet', c.walletSecret!, `wallet:${c.agentId}`) })))
          .execute();
      }
    });
  }

  /** Undoes addCredential when the ledger refused the registration. */
  async removeCredential(agentId: string): Promise<void> {
    this.verified.forget(agentId);
    this.sealedWallets.delete(agentId);
    await this.database.db.transaction().execute(async (trx) => {
      await trx.deleteFrom(this.table('wallet_secrets')).where('agent_id', '=', agentId).execute();
      await trx.deleteFrom(this.table('credentials')).where('agent_id', '=', agentId).execute();
      await this.announceChange(trx, agentId);
    });
  }

  /**
   * The agent id a key belongs to, or undefined: found by its id, then its hash compared in constant time. A key
   * this process verified before is not read again until a rotation is heard (see KeyCache).
   */
  async authenticate(apiKey: string): Promise<string | undefined> {
    const keyId = apiKeyId(apiKey);
    if (!keyId) return undefined;
    const keyHash = hashApiKey(apiKey);
    const known = this.verified.agentOf(keyId, keyHash);
    if (known) return known;
    const mark = this.verified.mark;
    const row = await this.database.db
      .selectFrom(this.table('credentials'))
      .select(['agent_id', 'key_hash'])
      .where('key_id', '=', keyId)
      .executeTakeFirst();
    if (!row) return undefined;
    const agentId = row.agent_id as string;
    this.verified.remember(keyId, agentId, row.key_hash as string, mark);
    return sameHash(row.key_hash, keyHash) ? agentId : undefined;
  }

  /** How many keys this process holds as verified (a gauge; 0 while rotations are not being heard). */
  get verifiedKeys(): number {
    return this.verified.size;
  }

  /** Tells every process, when `trx` commits, that the agent's key changed: each forgets what it verified. */
  private async announceChange(trx: Kysely<any>, agentId: string): Promise<void> {
    await sql`select pg_notify(${this.rotations}, ${agentId})`.execute(trx);
  }

  /**
   * Replaces `currentKey` by `newKey`; the old key stops working the moment this commits, on every
   * process. False when `currentKey` is no longer the citizen's key (a concurrent rotation won). The
   * memory data key is re-wrapped in the same transaction: notes never stay wrapped under a dead key.
   */
  async rotateKey(agentId: string, currentKey: string, newKey: string): Promise<boolean> {
    const echo = this.verified.echoOf(agentId);
    try {
      const rotated = await this.database.db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable(this.table('credentials'))
          .set({ key_id: apiKeyId(newKey), key_hash: hashApiKey(newKey), rotated_at: new Date() })
          .where('agent_id', '=', agentId)
          .where('key_hash', '=', hashApiKey(currentKey))
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return false;
        await this.memory.rewrap(trx, agentId, currentKey, newKey);
        await this.announceChange(trx, agentId);
        return true;
      });
      this.verified.forget(agentId);
      // Answering only once the notification is back means every other process has been sent it too.
      if (rotated) await echo.heard;
      return rotated;
    } finally {
      echo.cancel();
    }
  }

  async walletSecret(agentId: string): Promise<Buffer | undefined> {
    let sealed = this.sealedWallets.get(agentId);
    if (sealed === undefined) {
      const row = await this.database.db
        .selectFrom(this.table('wallet_secrets'))
        .select('sealed')
        .where('agent_id', '=', agentId)
        .executeTakeFirst();
      if (!row) return undefined;
      sealed = row.sealed as string;
      if (this.sealedWallets.size >= SEALED_WALLETS_KEPT) this.sealedWallets.delete(this.sealedWallets.keys().next().value!);
      this.sealedWallets.set(agentId, sealed);
    }
    return this.keys.unseal('wallet', sealed, `wallet:${agentId}`);
  }

  /** Where the citizen's inbox was last acked; nothing acked is the start of time. */
  async inboxCursor(agentId: string): Promise<InboxCursor> {
    const row = await this.database.db
      .selectFrom(this.table('inbox_cursors'))
      .select(['at', 'seq'])
      .where('agent_id', '=', agentId)
      .executeTakeFirst();
    return row ? { at: Number(row.at), seq: row.seq === null ? null : Number(row.seq) } : { at: 0, seq: null };
  }

  async setInboxCursor(agentId: string, cursor: InboxCursor): Promise<void> {
    await this.database.db
      .insertInto(this.table('inbox_cursors'))
      .values({ agent_id: agentId, at: cursor.at, seq: cursor.seq })
      .onConflict((oc) => oc.column('agent_id').doUpdateSet({ at: cursor.at, seq: cursor.seq }))
      .execute();
  }
}
