import { sql, type Kysely } from 'kysely';
import { liftTimeouts, newUlid } from '@svc/readmodel';
import { heldFanOutPosition } from './fanOut';
import { TIMESTAMPED_SIGNING, type DoorbellTables } from './schema';
import type { DoorbellSeals } from './seals';


/** Plaintext URLs sealed per transaction when init finds doorbells registered before URLs were sealed. */
const URL_SEAL_BATCH = 500;

export interface Doorbell {
  id: string;
  agentId: string;
  /** Unsealed: for its owner's eyes and the delivery only. */
  url: string;
  kinds: string[];
  hasSecret: boolean;
  muted: boolean;
  failures: number;
  createdAt: number;
  /** Ledger entries with a larger seq ring it: it was registered after this one. */
  afterSeq: number;
}

export interface DoorbellRegistration {
  agentId: string;
  /** Already checked and normalized by the caller. */
  url: string;
  kinds: string[];
  secret?: string;
  /** The ledger head when the request arrived (`store.headRevision('ledger')`). */
  ledgerHead: number;
  /** How many doorbells one citizen may hold. */
  limit: number;
}

export type RegistrationOutcome = { ok: true; doorbell: Doorbell; created: boolean } | { ok: false; limit: number };

/** The citizens' doorbells: URL and secret sealed, the URL found by its keyed hash. */
export class DoorbellRegistry {
  constructor(
    private readonly db: Kysely<any>,
    private readonly tables: DoorbellTables,
    private readonly seals: DoorbellSeals,
  ) {}

  /**
   * Seals the URLs of doorbells registered before URLs were sealed, a batch per transaction, then drops the
   * plaintext column. Processes that start at once take turns batch by batch, and a start that stopped
   * half-way is taken up where it was by the next one. Once the column is gone this is one lookup.
   */
  async sealPlaintextUrls(): Promise<void> {
    const { tables, seals } = this;
    for (let done = false; !done; ) {
      done = await this.db.transaction().execute(async (trx) => {
        await liftTimeouts(trx);
        await sql`select pg_advisory_xact_lock(hashtext(${`doorbell-urls:${tables.schema}`}))`.execute(trx);
        const column = await sql`
          select 1 from information_schema.columns where table_schema = ${tables.schema} and table_name = 'doorbells' and column_name = 'url'`.execute(trx);
        if (column.rows.length === 0) return true;
        const plain = await sql<{ id: string; agent_id: string; url: string }>`
          select id, agent_id, url from ${tables.ref('doorbells')} where url is not null order by id limit ${URL_SEAL_BATCH}`.execute(trx);
        if (plain.rows.length === 0) {
          await sql`alter table ${tables.ref('doorbells')} alter column url_sealed set not null, alter column url_hash set not null, drop column url`.execute(trx);
          return true;
        }
        await sql`
          update ${tables.ref('doorbells')} d set url_sealed = s.sealed, url_hash = s.hash, url = null
            from unnest(${plain.rows.map((r) => r.id)}::text[], ${plain.rows.map((r) => seals.sealUrl(r.id, r.url))}::text[],
                        ${plain.rows.map((r) => seals.urlHash(r.agent_id, r.url))}::text[]) as s(id, sealed, hash)
           where d.id = s.id`.execute(trx);
        return false;
      });
    }
  }

  /**
   * Registers a URL, or updates the caller's registration of the same URL: new kinds and secret, failures
   * and backoff reset, unmuted. A per-citizen lock holds the limit under concurrent registrations; reading
   * the fan-out position under a share lock means the new doorbell rings for every entry the fan-out has
   * not passed.
   */
  async register(input: DoorbellRegistration): Promise<RegistrationOutcome> {
    const { tables, seals } = this;
    return this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${`doorbells:${input.agentId}`}))`.execute(trx);
      const afterSeq = Math.max(input.ledgerHead, await heldFanOutPosition(trx, tables));
      const now = Date.now();
      const existing = await trx
        .selectFrom(tables.name('doorbells'))
        .select('id')
        .where('agent_id', '=', input.agentId)
        .where('url_hash', 'in', seals.urlHashes(input.agentId, input.url))
        .executeTakeFirst();
      if (existing) {
        const row = await trx
          .updateTable(tables.name('doorbells'))
          .set({
            kinds: input.kinds.join(','),
            secret_sealed: seals.sealSecret(existing.id, input.secret),
            url_sealed: seals.sealUrl(existing.id, input.url),
            url_hash: seals.urlHash(input.agentId, input.url),
            signing: TIMESTAMPED_SIGNING,
            failures: 0,
            muted: false,
            muted_at: null,
            // The pause a failure left goes too; a send in flight keeps its lease (one at a time).
            next_send_at: sql`case when claim_id is null then now() else next_send_at end`,
            updated_at: now,
          })
          .where('id', '=', existing.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        return { ok: true as const, created: false, doorbell: this.toDoorbell(row) };
      }
      const held = await trx
        .selectFrom(tables.name('doorbells'))
        .select((eb) => eb.fn.countAll().as('n'))
        .where('agent_id', '=', input.agentId)
        .executeTakeFirst();
      if (Number(held?.n ?? 0) >= input.limit) return { ok: false as const, limit: input.limit };
      const id = `door_${newUlid()}`;
      const row = await trx
        .insertInto(tables.name('doorbells'))
        .values({
          id,
          agent_id: input.agentId,
          url_sealed: seals.sealUrl(id, input.url),
          url_hash: seals.urlHash(input.agentId, input.url),
          kinds: input.kinds.join(','),
          secret_sealed: seals.sealSecret(id, input.secret),
          signing: TIMESTAMPED_SIGNING,
          after_seq: afterSeq,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return { ok: true as const, created: true, doorbell: this.toDoorbell(row) };
    });
  }

  async list(agentId: string): Promise<Doorbell[]> {
    const rows = await this.db.selectFrom(this.tables.name('doorbells')).selectAll().where('agent_id', '=', agentId).orderBy('id').execute();
    return rows.map((row) => this.toDoorbell(row));
  }

  async get(doorbellId: string): Promise<Doorbell | undefined> {
    const row = await this.db.selectFrom(this.tables.name('doorbells')).selectAll().where('id', '=', doorbellId).executeTakeFirst();
    return row ? this.toDoorbell(row) : undefined;
  }

  /** Removes the caller's doorbell (and its delivery log) by id or by URL. */
  async remove(agentId: string, by: { id: string } | { url: string }): Promise<{ id: string; url: string } | undefined> {
    // One transaction: a URL that cannot be unsealed leaves the row where it was.
    return this.db.transaction().execute(async (trx) => {
      let query = trx.deleteFrom(this.tables.name('doorbells')).where('agent_id', '=', agentId);
      query = 'id' in by ? query.where('id', '=', by.id) : query.where('url_hash', 'in', this.seals.urlHashes(agentId, by.url));
      const row = await query.returning(['id', 'url_sealed']).executeTakeFirst();
      return row ? { id: row.id as string, url: this.seals.unsealUrl(row.id as string, row.url_sealed as string) } : undefined;
    });
  }

  private toDoorbell(row: Record<string, any>): Doorbell {
    return {
      id: row.id,
      agentId: row.agent_id,
      url: this.seals.unsealUrl(row.id, row.url_sealed),
      kinds: String(row.kinds).split(','),
      hasSecret: row.secret_sealed !== null && row.secret_sealed !== undefined,
      muted: Boolean(row.muted),
      failures: Number(row.failures),
      createdAt: Number(row.created_at),
      afterSeq: Number(row.after_seq),
    };
  }
}
