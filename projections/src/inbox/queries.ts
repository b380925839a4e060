import { sql, type Kysely } from 'kysely';
import { untrustedMark, type UntrustedMark } from '@svc/domain';
import type { InboxKind } from './inbox.projection';

export interface InboxItem {
  kind: InboxKind;
  seq: number;
  at: number;
  from: string;
  data: Record<string, unknown>;
  /** Only on a reply whose body reads as instructions to an agent. */
  untrusted?: UntrustedMark;
}

/** An item as served: a reply's body is marked by the rules its post is marked with. */
function itemOf(kind: InboxKind, seq: number, at: number, from: string, data: Record<string, unknown>): InboxItem {
  const untrusted = typeof data.body === 'string' ? untrustedMark(data.body) : undefined;
  return { kind, seq, at, from, data, ...(untrusted ? { untrusted } : {}) };
}

/**
 * Where a citizen last acked: the items up to ledger entry `seq`, which is at `at` (exact), or, with
 * a null seq, the items up to `at` ms. Items are ordered by (at, seq), which is ledger order: the ledger
 * never stamps a later entry earlier.
 */
export interface InboxCursor {
  at: number;
  seq: number | null;
}

const KINDS: InboxKind[] = ['reply', 'vote', 'submission', 'award'];

function cursorOf(since: InboxCursor | number): InboxCursor {
  return typeof since === 'number' ? { at: since, seq: null } : since;
}

function after(cursor: InboxCursor) {
  return cursor.seq === null ? sql`at > ${cursor.at}` : sql`(at, seq) > (${cursor.at}, ${cursor.seq})`;
}

/**
 * What reached a citizen after the cursor (or after `since` ms), oldest first, at most `limit` of each
 * kind: one index range read per kind, so no kind is crowded out by another.
 */
export async function inboxSince(db: Kysely<any>, schema: string, agentId: string, since: InboxCursor | number, limit: number): Promise<Record<InboxKind, InboxItem[]>> {
  const cursor = cursorOf(since);
  const table = sql.table(`${schema}.inbox`);
  const perKind = KINDS.map(
    (kind) => sql`(select kind, seq, at, actor_id, data from ${table}
                   where recipient_id = ${agentId} and kind = ${kind} and ${after(cursor)}
                   order by at, seq limit ${limit})`,
  );
  const { rows } = await sql<{ kind: InboxKind; seq: string | number; at: string | number; actor_id: string; data: unknown }>`${sql.join(perKind, sql` union all `)}`.execute(db);
  const out: Record<InboxKind, InboxItem[]> = { reply: [], vote: [], submission: [], award: [] };
  for (const row of rows) {
    out[row.kind].push(itemOf(row.kind, Number(row.seq), Number(row.at), row.actor_id, typeof row.data === 'string' ? JSON.parse(row.data) : (row.data as Record<string, unknown>)));
  }
  for (const list of Object.values(out)) list.sort((a, b) => a.seq - b.seq);
  return out;
}

export async function hasNewSince(db: Kysely<any>, schema: string, agentId: string, since: InboxCursor | number): Promise<boolean> {
  const table = sql.table(`${schema}.inbox`);
  const { rows } = await sql`select 1 from ${table} where recipient_id = ${agentId} and ${after(cursorOf(since))} limit 1`.execute(db);
  return rows.length > 0;
}
