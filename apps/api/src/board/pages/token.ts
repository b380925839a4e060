import type { ActionView } from '@svc/projections';
import { fillOf } from '@svc/projections';
import type { BoardPage } from '../page';

interface TradeRow {
  at: number;
  who: ActionView['agent'];
  action: string;
  sol: number | null;
  tokens: number | null;
  signature: string;
}

/**
 * An action of the coin as a row: what it moved in SOL and in the coin is the candles' own reading of its record
 * (fillOf), so the table and the chart agree. An action that is no trade (a burn, a transfer) shows none.
 */
function tradeRow(a: ActionView): TradeRow {
  const fill = fillOf({ seq: a.seq, at: a.at, actor: a.agent.id, type: 'ActionRecorded', data: { action: a.action, signature: a.signature, wallet: a.wallet, details: a.details } } as Parameters<typeof fillOf>[0]);
  return { at: a.at, who: a.agent, action: a.action, sol: fill?.sol ?? null, tokens: fill?.tokens ?? null, signature: a.signature };
}

export default {
  path: '/t/:mint',
  view: 'token',
  async load(read, { mint }) {
    const [coin, { actions }] = await Promise.all([read('/api/v1/tokens/{mint}', { mint: mint! }), read('/api/v1/activity', {}, { mint: mint!, limit: 20 })]);
    return { title: coin.symbol ? `${coin.symbol} · ${coin.name ?? ''}` : coin.mint, data: { coin, trades: (actions as ActionView[]).map(tradeRow) }, mint: coin.mint };
  },
} satisfies BoardPage;
