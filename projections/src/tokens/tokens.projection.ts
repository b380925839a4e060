import { sql, type Kysely } from 'kysely';
import { untrustedMark, untrustedOfEntry } from '@svc/domain';
import { sqlMigration } from '@svc/readmodel';
import { defineProjection, insertRows, unnestRows } from '../projection';
import { markColumn, untrustedColumnMigration } from '../untrusted';
import { actionOf, object, text, tradeOf, WRAPPED_SOL, type ActionEntry, type Trade } from './trades';

export { WRAPPED_SOL } from './trades';

/**
 * Every coin deployed through the service (from `deploy` actions): who deployed it and when, what the deploy
 * said about it, its fee-sharing status (moved by `fee_share` actions, which may also name coins deployed
 * elsewhere: `token_fee_shares` keeps those), and counters of the trades the service recorded in it.
 */
export const tokensProjection = defineProjection({
  name: 'tokens',
  canHandle: ['ActionRecorded'],
  migrations: [
    sqlMigration('tokens_001', (schema) => [
      `create table ${schema}.tokens (
         mint text primary key,
         seq bigint not null unique,
         agent_id text not null,
         wallet text not null,
         signature text not null,
         bonding_curve text,
         creator text,
         name text not null,
         symbol text not null,
         description text,
         image text,
         metadata_uri text,
         links jsonb not null,
         mayhem boolean not null,
         holder_reward boolean not null,
         dev_buy jsonb not null,
         fee_share_status text not null,
         fee_share_shares jsonb not null,
         fee_share_signature text,
         deployed_at bigint not null,
         buys integer not null default 0,
         sells integer not null default 0,
         buy_volume_sol double precision not null default 0,
         sell_volume_sol double precision not null default 0,
         last_trade_at bigint,
         trades_seq bigint not null default -1)`,
      `create index tokens_by_agent on ${schema}.tokens (agent_id, seq desc)`,
      `create table ${schema}.token_fee_shares (
         mint text primary key,
         status text not null,
         shares jsonb not null,
         signature text not null,
         seq bigint not null)`,
    ]),
    untrustedColumnMigration('tokens_002', 'tokens', 'mint', ['name', 'symbol', 'description'], (row) =>
      untrustedMark(String(row.name), String(row.symbol), row.description === null ? null : String(row.description)),
    ),
  ],
  async apply(trx, schema, entries) {
    const deploys = [];
    const feeShares = new Map<string, { mint: string; status: string; shares: string; signature: string; seq: number }>();
    const trades: Trade[] = [];
    for (const { entry } of entries) {
      const { data, details } = actionOf(entry);
      if (data.action === 'deploy') {
        const mint = text(details.mint);
        if (!mint) continue;
        const feeShare = object(details.fee_share);
        deploys.push({
          mint,
          seq: entry.seq,
          agent_id: entry.actor,
          wallet: data.wallet,
          signature: data.signature,
          bonding_curve: text(details.bonding_curve),
          creator: text(details.creator),
          name: text(details.name) ?? '',
          symbol: text(details.symbol) ?? '',
          description: text(details.description),
          untrusted: markColumn(untrustedOfEntry(entry.type, entry.data)),
          image: text(details.image),
          metadata_uri: text(details.metadata_uri),
          links: JSON.stringify(object(details.links)),
          mayhem: details.mayhem === true,
          holder_reward: details.holder_reward === true,
          dev_buy: JSON.stringify(object(details.dev_buy)),
          fee_share_status: text(feeShare.status) ?? 'off',
          fee_share_shares: JSON.stringify(Array.isArray(feeShare.shares) ? feeShare.shares : []),
          deployed_at: entry.at,
        });
      } else if (data.action === 'fee_share') {
        const mint = text(details.mint);
        if (!mint) continue;
        // The latest record of a coin wins, in the batch as across batches.
        feeShares.set(mint, {
          mint,
          status: text(details.status) ?? 'active',
          shares: JSON.stringify(Array.isArray(details.shares) ? details.shares : []),
          signature: data.signature,
          seq: entry.seq,
        });
      } else {
        const trade = tradeOf(entry);
        if (trade) trades.push(trade);
      }
    }
    const s = sql.raw(schema);
    if (deploys.length > 0) {
      const columns = {
        mint: 'text',
        seq: 'bigint',
        agent_id: 'text',
        wallet: 'text',
        signature: 'text',
        bonding_curve: 'text',
        creator: 'text',
        name: 'text',
        symbol: 'text',
        description: 'text',
        untrusted: 'jsonb',
        image: 'text',
        metadata_uri: 'text',
        links: 'jsonb',
        mayhem: 'boolean',
        holder_reward: 'boolean',
        dev_buy: 'jsonb',
        fee_share_status: 'text',
        fee_share_shares: 'jsonb',
        deployed_at: 'bigint',
      } as const;
      await sql`${insertRows(`${schema}.tokens`, deploys, columns)} on conflict (mint) do nothing`.execute(trx);
    }
    if (feeShares.size > 0) {
      await sql`${insertRows(`${schema}.token_fee_shares`, [...feeShares.values()], { mint: 'text', status: 'text', shares: 'jsonb', signature: 'text', seq: 'bigint' })}
        on conflict (mint) do update set status = excluded.status, shares = excluded.shares, signature = excluded.signature, seq = excluded.seq
        where ${s}.token_fee_shares.seq < excluded.seq`.execute(trx);
    }
    // A coin's sharing record may land in the same batch as its deploy, or before it when the deploy's record
    // came late (settled from the outbox after a crash).
    const sharing = [...new Set([...deploys.map((d) => d.mint), ...feeShares.keys()])];
    if (sharing.length > 0) await adoptFeeShares(trx, schema, sharing);
    if (trades.length > 0) await countTrades(trx, schema, trades);
  },
});

async function adoptFeeShares(trx: Kysely<any>, schema: string, mints: string[]): Promise<void> {
  const s = sql.raw(schema);
  await sql`
    update ${s}.tokens t set fee_share_status = f.status, fee_share_shares = f.shares, fee_share_signature = f.signature
    from ${s}.token_fee_shares f
    where f.mint = t.mint and t.mint = any(${mints}::text[])`.execute(trx);
}

/**
 * Adds each coin's trades once: only those after the coin's `trades_seq`, which moves to the last one counted,
 * so a batch applied again (or overlapping one applied before) changes nothing. One statement per batch.
 */
async function countTrades(trx: Kysely<any>, schema: string, trades: Trade[]): Promise<void> {
  const s = sql.raw(schema);
  await sql`
    update ${s}.tokens t set
      buys = t.buys + n.buys,
      sells = t.sells + n.sells,
      buy_volume_sol = t.buy_volume_sol + n.buy_sol,
      sell_volume_sol = t.sell_volume_sol + n.sell_sol,
      last_trade_at = greatest(coalesce(t.last_trade_at, 0), n.last_at),
      trades_seq = n.last_seq
    from (
      select v.mint,
             count(*) filter (where v.side = 'buy') as buys,
             count(*) filter (where v.side = 'sell') as sells,
             coalesce(sum(v.sol) filter (where v.side = 'buy'), 0) as buy_sol,
             coalesce(sum(v.sol) filter (where v.side = 'sell'), 0) as sell_sol,
             max(v.at) as last_at,
             max(v.seq) as last_seq
      from ${unnestRows<Omit<Trade, 'tokens'>>(trades, { mint: 'text', seq: 'bigint', at: 'bigint', side: 'text', sol: 'double precision' }, 'v')}
      join ${s}.tokens c on c.mint = v.mint and v.seq > c.trades_seq
      group by v.mint) n
    where t.mint = n.mint`.execute(trx);
}

const ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/** The mints an action names (SOL aside), for those that follow activity by coin. */
export function mintsOf(details: Record<string, unknown>): string[] {
  const named = [details.mint, details.input_mint, details.output_mint].map(text).filter((m): m is string => m !== null && m !== WRAPPED_SOL && ADDRESS.test(m));
  return [...new Set(named)];
}

/** An ActionRecorded entry's details, as an object whatever the entry holds. */
export function actionDetails(entry: ActionEntry): Record<string, unknown> {
  return actionOf(entry).details;
}
