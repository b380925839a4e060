import { sql, type Kysely } from 'kysely';
import type { ProjectedEntries } from './projectedEntries';
import { FANOUT_POSITION, type DoorbellTables } from './schema';

/** The ledger kinds a doorbell can ring for. */
export const RINGING_KINDS: readonly string[] = ['post', 'action', 'bounty', 'buyback'];

/** Delivery rows one fan-out transaction may write: fewer entries per pass as doorbells grow in number. */
const FANOUT_ROW_BUDGET = 20_000;

export interface FanOutPass {
  /** Another worker holds the position: nothing was done. */
  locked: boolean;
  queued: number;
  /** The pass took as many entries as it could: more may follow at once. */
  more: boolean;
}

/**
 * Follows the ledger from one position shared by every worker process, and queues one delivery per
 * (doorbell, seq) for the entries each doorbell rings for.
 */
export class DoorbellFanOut {
  constructor(
    private readonly db: Kysely<any>,
    private readonly tables: DoorbellTables,
    private readonly entries: ProjectedEntries,
  ) {}

  /**
   * Queues a delivery for every active doorbell that rings for each entry after the fan-out position, and
   * moves the position, in one transaction. The rows are made by one INSERT ... SELECT, never in memory,
   * and fewer entries are taken per pass the more doorbells there are, so a pass writes at most about
   * FANOUT_ROW_BUDGET rows. SKIP LOCKED: while another worker fans out, this one does not wait (`locked`).
   * The unique (doorbell, seq) makes a repeated fan-out harmless.
   */
  async run(limit: number): Promise<FanOutPass> {
    const { tables } = this;
    return this.db.transaction().execute(async (trx) => {
      const position = await sql<{ seq: number }>`select seq from ${tables.ref('doorbell_fanout')} where name = ${FANOUT_POSITION} for update skip locked`.execute(trx);
      if (position.rows.length === 0) return { locked: true, queued: 0, more: false };
      const from = Number(position.rows[0]!.seq);
      const active = await sql<{ n: string | number; first: string | number | null }>`
        select count(*) as n, min(after_seq) as first from ${tables.ref('doorbells')} where not muted`.execute(trx);
      const doorbells = Number(active.rows[0]?.n ?? 0);
      if (doorbells === 0) {
        // Nothing can ring: jump to what is projected instead of walking the ledger.
        const to = (await this.entries.lastSeq(trx)) ?? from;
        if (to > from) await this.move(trx, to);
        return { locked: false, queued: 0, more: false };
      }
      // No doorbell rings for an entry at or below every doorbell's registration point, and every later
      // registration starts at or above this position: skip straight there.
      const start = Math.max(from, Number(active.rows[0]!.first));
      const take = Math.max(1, Math.min(limit, Math.floor(FANOUT_ROW_BUDGET / doorbells)));
      const now = Date.now();
      const pass = await sql<{ entries: string | number; last: string | number | null; queued: string | number }>`
        with batch as (${this.entries.kindsAfter(trx, start, { limit: take })}), queued as (
          insert into ${tables.ref('doorbell_deliveries')} (id, doorbell_id, agent_id, seq, kind, status, created_at, updated_at)
          select ${tables.deliveryId()}, b.id, b.agent_id, e.seq, e.kind, 'pending', ${now}::bigint, ${now}::bigint
            from batch e
            join ${tables.ref('doorbells')} b on not b.muted and e.seq > b.after_seq and e.kind = any(string_to_array(b.kinds, ','))
           where e.kind in (${sql.join(RINGING_KINDS)})
          on conflict (doorbell_id, seq) do nothing
          returning 1
        )
        select (select count(*) from batch) as entries, (select max(seq) from batch) as last, (select count(*) from queued) as queued`.execute(trx);
      const row = pass.rows[0]!;
      if (Number(row.entries) === 0) {
        if (start > from) await this.move(trx, start);
        return { locked: false, queued: 0, more: false };
      }
      await this.move(trx, Number(row.last));
      return { locked: false, queued: Number(row.queued), more: Number(row.entries) === take };
    });
  }

  private async move(trx: Kysely<any>, seq: number): Promise<void> {
    await trx.updateTable(this.tables.name('doorbell_fanout')).set({ seq }).where('name', '=', FANOUT_POSITION).execute();
  }

  async position(): Promise<number> {
    const row = await this.db.selectFrom(this.tables.name('doorbell_fanout')).select('seq').where('name', '=', FANOUT_POSITION).executeTakeFirst();
    return Number(row?.seq ?? -1);
  }
}

/**
 * The fan-out position, share-locked until `trx` ends: the fan-out cannot pass it meanwhile, so a doorbell
 * registered in `trx` after it rings for every entry the fan-out has yet to pass.
 */
export async function heldFanOutPosition(trx: Kysely<any>, tables: DoorbellTables): Promise<number> {
  const position = await sql<{ seq: number }>`select seq from ${tables.ref('doorbell_fanout')} where name = ${FANOUT_POSITION} for share`.execute(trx);
  return Number(position.rows[0]?.seq ?? -1);
}
