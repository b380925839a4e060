import type { Kysely } from 'kysely';
import type { InboxKind } from './inbox.projection';

export interface InboxItem {
  kind: InboxKind;
  seq: number;
  at: number;
  from: string;
  data: Record<string, unknown>;
}

/** What reached a citizen after `sinceMs`, oldest first, at most `limit` of each kind. */
export async function inboxSince(db: Kysely<any>, schema: string, agentId: string, sinceMs: number, limit: number): Promise<Record<InboxKind, InboxItem[]>> {
  const out: Record<InboxKind, InboxItem[]> = { reply: [], vote: [], submission: [], award: [] };
  const rows = await db
    .selectFrom(`${schema}.inbox`)
    .select(['kind', 'seq', 'at', 'actor_id', 'data'])
    .where('recipient_id', '=', agentId)
    .where('at', '>', sinceMs)
    .orderBy('at')
    .orderBy('seq')
    .limit(limit * 4)
    .execute();
  for (const row of rows as any[]) {
    const list = out[row.kind as InboxKind];
    if (list.length >= limit) continue;
    list.push({ kind: row.kind, seq: Number(row.seq), at: Number(row.at), from: row.actor_id, data: typeof row.data === 'string' ? JSON.parse(row.data) : row.data });
  }
  return out;
}

export async function hasNewSince(db: Kysely<any>, schema: string, agentId: string, sinceMs: number): Promise<boolean> {
  const row = await db.selectFrom(`${schema}.inbox`).select('seq').where('recipient_id', '=', agentId).where('at', '>', sinceMs).limit(1).executeTakeFirst();
  return row !== undefined;
}
