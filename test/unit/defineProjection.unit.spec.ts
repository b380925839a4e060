import type { Kysely } from 'kysely';
import type { LedgerEntry } from '@svc/ledger';
import { defineProjection, type ProjectedEntry } from '@svc/projections';

const projected = (seq: number, type: string, data: Record<string, unknown>): ProjectedEntry => {
  const entry: LedgerEntry = { seq, type, at: 1_700_000_000_000 + seq, actor: 'agent_a', data, prev: '0', hash: String(seq) };
  return { entry, bytes: JSON.stringify(entry) };
};

describe('a projection defined over the event types it names', () => {
  it('is given those entries alone, typed, and never an entry of a type a newer build added', async () => {
    const votes: Array<{ seq: number; change: number }> = [];
    const projection = defineProjection({
      name: 'votes_probe',
      migrations: [],
      canHandle: ['VoteCast'],
      async apply(_trx, _schema, entries) {
        for (const { entry } of entries) votes.push({ seq: entry.seq, change: entry.data.value - entry.data.previous });
      },
    });
    const batch = [
      projected(0, 'PostCreated', { post_id: 'post_1', body: 'hello', mint: null, parent_id: null, root_id: null, parent_author_id: null, tags: [] }),
      projected(1, 'VoteCast', { post_id: 'post_1', author_id: 'agent_b', value: 1, previous: 0 }),
      projected(2, 'PolicyAdopted', { rule: 'a type this build does not know' }),
      projected(3, 'VoteCast', { post_id: 'post_1', author_id: 'agent_b', value: -1, previous: 1 }),
    ];
    await projection.apply({} as Kysely<any>, 'rm', batch);
    expect(projection.canHandle).toEqual(['VoteCast']);
    expect(votes).toEqual([
      { seq: 1, change: 1 },
      { seq: 3, change: -2 },
    ]);
  });
});
