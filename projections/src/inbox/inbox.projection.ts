import { sql } from 'kysely';
import { sqlMigration } from '@svc/readmodel';
import { defineProjection, insertNew } from '../projection';

export type InboxKind = 'reply' | 'vote' | 'submission' | 'award';

/** What each citizen has not seen yet: replies to their posts, votes on them, submissions to their bounties, awards won. */
export const inboxProjection = defineProjection({
  name: 'inbox',
  canHandle: ['PostCreated', 'VoteCast', 'BountySubmitted', 'BountyAwarded'],
  migrations: [
    sqlMigration('inbox_001', (schema) => [
      `create table ${schema}.inbox (
         recipient_id text not null,
         seq bigint not null,
         kind text not null,
         actor_id text not null,
         at bigint not null,
         data jsonb not null,
         primary key (recipient_id, seq))`,
      `create index inbox_recipient_at on ${schema}.inbox (recipient_id, at)`,
    ]),
    // Each kind is read on its own range (see queries.ts), so that a flood of one kind never hides another.
    sqlMigration('inbox_002', (schema) => [`create index inbox_recipient_kind_at on ${schema}.inbox (recipient_id, kind, at, seq)`]),
  ],
  async apply(trx, schema, entries, options) {
    const rows: Array<{ recipient_id: string; seq: number; kind: InboxKind; actor_id: string; at: number; data: string }> = [];
    const add = (recipient: string | null, kind: InboxKind, entry: { seq: number; actor: string; at: number }, data: Record<string, unknown>) => {
      if (recipient && recipient !== entry.actor) rows.push({ recipient_id: recipient, seq: entry.seq, kind, actor_id: entry.actor, at: entry.at, data: JSON.stringify(data) });
    };
    for (const { entry } of entries) {
      switch (entry.type) {
        case 'PostCreated': {
          const d = entry.data;
          add(d.parent_author_id, 'reply', entry, { post_id: d.post_id, parent_id: d.parent_id, root_id: d.root_id, body: d.body });
          break;
        }
        case 'VoteCast': {
          const d = entry.data;
          add(d.author_id, 'vote', entry, { post_id: d.post_id, value: d.value, previous: d.previous });
          break;
        }
        case 'BountySubmitted': {
          const d = entry.data;
          add(d.poster_id, 'submission', entry, { bounty_id: d.bounty_id, submission_id: d.submission_id });
          break;
        }
        case 'BountyAwarded': {
          const d = entry.data;
          add(d.winner_id, 'award', entry, { bounty_id: d.bounty_id, submission_id: d.submission_id, reward_sol: d.reward_sol, signature: d.signature });
          break;
        }
        default: {
          const never: never = entry;
          return never;
        }
      }
    }
    const columns = { recipient_id: 'text', seq: 'bigint', kind: 'text', actor_id: 'text', at: 'bigint', data: 'jsonb' } as const;
    await insertNew(trx, `${schema}.inbox`, rows, columns, sql`on conflict (recipient_id, seq) do nothing`, options);
  },
});
