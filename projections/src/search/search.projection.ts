import { sql } from 'kysely';
import { sqlMigration } from '@svc/readmodel';
import { defineProjection, insertNew, insertRows } from '../projection';
import { JOINER } from './queries';

export type SearchKind = 'post' | 'citizen' | 'bounty' | 'token';

/**
 * One row of searchable text per post, citizen, bounty and coin deployed here, each kind with
 * its own trigram index (of the text with its spaces joined), so a substring query is an index lookup and never
 * a scan. Tags are searched
 * through the tags table's own trigram index.
 */
export const searchProjection = defineProjection({
  name: 'search',
  canHandle: ['PostCreated', 'CitizenRegistered', 'BountyPosted', 'ActionRecorded'],
  migrations: [
    sqlMigration('search_001', (schema) => [
      `create extension if not exists pg_trgm with schema public`,
      `create table ${schema}.search_docs (
         kind text not null,
         ref_id text not null,
         text text not null,
         seq bigint not null,
         primary key (ref_id, kind))`,
      // Per kind: a trigram index for rare substrings, and the newest-first index, which a common
      // substring walks only until the page is full.
      ...(['post', 'citizen', 'bounty', 'token'] as const).flatMap((kind) => [
        `create index search_${kind}_trgm on ${schema}.search_docs using gin (text public.gin_trgm_ops) where kind = '${kind}'`,
        `create index search_${kind}_newest on ${schema}.search_docs (seq desc) where kind = '${kind}'`,
      ]),
      `create index tags_trgm on ${schema}.tags using gin (tag public.gin_trgm_ops)`,
    ]),
    // Tags in the order search answers them, which a common substring walks until the page is full,
    // as posts do with their newest-first index.
    sqlMigration('search_002', (schema) => [`create index tags_most_used on ${schema}.tags (posts desc, tag)`]),
    // The trigram index of the text with its spaces joined (queries.ts, JOINER), so that a phrase is looked up
    // where its words meet. It replaces the index of the text as it is, which no query uses any more.
    sqlMigration('search_003', (schema) =>
      (['post', 'citizen', 'bounty', 'token'] as const).flatMap((kind) => [
        `drop index if exists ${schema}.search_${kind}_trgm`,
        `create index search_${kind}_joined_trgm on ${schema}.search_docs using gin (translate(text, ' ', '${JOINER}') public.gin_trgm_ops) where kind = '${kind}'`,
      ]),
    ),
  ],
  async apply(trx, schema, entries, options) {
    const rows: Array<{ kind: SearchKind; ref_id: string; text: string; seq: number }> = [];
    for (const { entry } of entries) {
      switch (entry.type) {
        case 'PostCreated': {
          const d = entry.data;
          rows.push({ kind: 'post', ref_id: d.post_id, text: [d.body, ...d.tags].join('\n'), seq: entry.seq });
          break;
        }
        case 'CitizenRegistered': {
          const d = entry.data;
          rows.push({ kind: 'citizen', ref_id: d.agent_id, text: [d.handle, d.bio].join('\n').replaceAll('\u0000', ''), seq: entry.seq });
          break;
        }
        case 'BountyPosted': {
          const d = entry.data;
          rows.push({ kind: 'bounty', ref_id: d.bounty_id, text: [d.title, d.body].join('\n'), seq: entry.seq });
          break;
        }
        case 'ActionRecorded': {
          const d = entry.data;
          if (d.action !== 'deploy') break;
          const coin = d.details as { mint: string; name: string; symbol: string; description?: string | null };
          rows.push({ kind: 'token', ref_id: coin.mint, text: [coin.name, coin.symbol, coin.mint, coin.description ?? ''].join('\n').replaceAll('\u0000', ''), seq: entry.seq });
          break;
        }
        default: {
          const never: never = entry;
          return never;
        }
      }
    }
    const columns = { kind: 'text', ref_id: 'text', text: 'text', seq: 'bigint' } as const;
    const onConflict = sql`on conflict (ref_id, kind) do nothing`;
    // A coin's mint is the chain's, not an id the ledger writer keeps unique: its rows keep the conflict clause.
    const tokens = rows.filter((row) => row.kind === 'token');
    await insertNew(trx, `${schema}.search_docs`, tokens.length > 0 ? rows.filter((row) => row.kind !== 'token') : rows, columns, onConflict, options);
    if (tokens.length > 0) await sql`${insertRows(`${schema}.search_docs`, tokens, columns)} ${onConflict}`.execute(trx);
  },
});
