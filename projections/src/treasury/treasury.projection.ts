import { sql } from 'kysely';
import { isReservedHandle, treasuryFlowOf } from '@svc/domain';
import { sqlMigration } from '@svc/readmodel';
import { defineProjection, insertRows } from '../projection';

const TOTALS = 'main';

/**
 * The treasury's money flow from the ledger: who @treasury is (its registration), every action it recorded
 * (`recent`), and running totals of the SOL its fee distributions brought in, the SOL its buybacks spent, the
 * tokens they bought and the tokens it burned. The amounts are those the chain showed once each transaction
 * confirmed (`details.observed`, see treasuryFlowOf), so a replay adds up to the same figures, to the lamport.
 */
export const treasuryProjection = defineProjection({
  name: 'treasury',
  canHandle: ['CitizenRegistered', 'ActionRecorded'],
  migrations: [
    sqlMigration('treasury_001', (schema) => [
      `create table ${schema}.treasury_totals (
         id text primary key,
         agent_id text,
         wallet text,
         last_seq bigint not null,
         fees_received_lamports numeric not null,
         sol_spent_lamports numeric not null,
         tokens_bought_raw numeric not null,
         tokens_burned_raw numeric not null,
         token_decimals integer,
         distributions integer not null,
         buybacks integer not null,
         burns integer not null)`,
      `insert into ${schema}.treasury_totals values ('${TOTALS}', null, null, -1, 0, 0, 0, 0, null, 0, 0, 0)`,
      `create table ${schema}.treasury_actions (
         seq bigint primary key,
         at bigint not null,
         action text not null,
         signature text not null,
         mint text,
         received_lamports numeric not null,
         spent_lamports numeric not null,
         bought_raw numeric not null,
         burned_raw numeric not null,
         details jsonb not null)`,
    ]),
  ],
  async apply(trx, schema, entries) {
    const s = sql.raw(schema);
    const current = (await sql<Record<string, any>>`select * from ${s}.treasury_totals where id = ${TOTALS} for update`.execute(trx)).rows[0]!;
    const totals = {
      agent_id: current.agent_id as string | null,
      wallet: current.wallet as string | null,
      last_seq: Number(current.last_seq),
      fees_received_lamports: BigInt(current.fees_received_lamports),
      sol_spent_lamports: BigInt(current.sol_spent_lamports),
      tokens_bought_raw: BigInt(current.tokens_bought_raw),
      tokens_burned_raw: BigInt(current.tokens_burned_raw),
      token_decimals: current.token_decimals === null ? null : Number(current.token_decimals),
      distributions: Number(current.distributions),
      buybacks: Number(current.buybacks),
      burns: Number(current.burns),
    };
    const actions = [];
    for (const { entry } of entries) {
      // Totals move once per entry: a batch applied again (or overlapping one applied before) adds nothing.
      if (entry.seq <= totals.last_seq) continue;
      totals.last_seq = entry.seq;
      if (entry.type === 'CitizenRegistered') {
        const data = entry.data;
        if (totals.agent_id === null && isReservedHandle(data.handle)) {
          totals.agent_id = data.agent_id;
          totals.wallet = data.wallet;
        }
        continue;
      }
      if (totals.agent_id === null || entry.actor !== totals.agent_id) continue;
      const data = entry.data;
      // Anchors move no treasury money but their fee, and come by the thousand a day: /api/v1/anchors lists them.
      if (data.action === 'anchor') continue;
      const details = data.details ?? {};
      const flow = treasuryFlowOf(data);
      totals.fees_received_lamports += flow.received_lamports;
      totals.sol_spent_lamports += flow.spent_lamports;
      totals.tokens_bought_raw += flow.bought_raw;
      totals.tokens_burned_raw += flow.burned_raw;
      if (data.action === 'fee_distribution') totals.distributions += 1;
      if (data.action === 'buyback') totals.buybacks += 1;
      if (data.action === 'burn') totals.burns += 1;
      if ((data.action === 'buyback' || data.action === 'burn') && typeof details.decimals === 'number') totals.token_decimals = details.decimals;
      actions.push({
        seq: entry.seq,
        at: entry.at,
        action: data.action,
        signature: data.signature,
        mint: typeof details.mint === 'string' ? details.mint : null,
        received_lamports: flow.received_lamports.toString(),
        spent_lamports: flow.spent_lamports.toString(),
        bought_raw: flow.bought_raw.toString(),
        burned_raw: flow.burned_raw.toString(),
        details: JSON.stringify(details),
      });
    }
    if (actions.length > 0) {
      const columns = { seq: 'bigint', at: 'bigint', action: 'text', signature: 'text', mint: 'text', received_lamports: 'numeric', spent_lamports: 'numeric', bought_raw: 'numeric', burned_raw: 'numeric', details: 'jsonb' } as const;
      await sql`${insertRows(`${schema}.treasury_actions`, actions, columns)} on conflict (seq) do nothing`.execute(trx);
    }
    await trx
      .updateTable(`${schema}.treasury_totals`)
      .set({
        ...totals,
        fees_received_lamports: totals.fees_received_lamports.toString(),
        sol_spent_lamports: totals.sol_spent_lamports.toString(),
        tokens_bought_raw: totals.tokens_bought_raw.toString(),
        tokens_burned_raw: totals.tokens_burned_raw.toString(),
      })
      .where('id', '=', TOTALS)
      .execute();
  },
});
