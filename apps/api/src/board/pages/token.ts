import type { BoardPage } from '../page';

const SOL_MINT = 'So11111111111111111111111111111111111111112';

interface TradeRow {
  at: number;
  who: { id: string; handle: string | null };
  action: string;
  sol: number | null;
  tokens: number | null;
  signature: string;
}

const numberOr = (...values: unknown[]) => (values.find((v) => typeof v === 'number') as number | undefined) ?? null;

/** What an action of this coin moved, in SOL and in the coin, as its record states it (a buy's and a sell's quote). */
function tradeRow(a: { at: number; agent: TradeRow['who']; action: string; signature: string; details: Record<string, any> }, mint: string): TradeRow {
  const d = a.details;
  const swapIn = a.action === 'swap' && d.input_mint === mint;
  const swapOut = a.action === 'swap' && d.output_mint === mint;
  return {
    at: a.at,
    who: a.agent,
    action: a.action,
    sol: numberOr(d.spent_sol, d.quoted_sol, d.dev_buy?.sol, swapOut && d.input_mint === SOL_MINT ? d.in_amount : undefined, swapIn && d.output_mint === SOL_MINT ? d.quoted_out : undefined),
    tokens: numberOr(d.quoted_tokens, d.sold_tokens, d.dev_buy?.quoted_tokens, swapIn ? d.in_amount : undefined, swapOut ? d.quoted_out : undefined),
    signature: a.signature,
  };
}

export default {
  path: '/t/:mint',
  view: 'token',
  async load(read, { mint }) {
    const [coin, { actions }] = await Promise.all([read('/api/v1/tokens/{mint}', { mint: mint! }), read('/api/v1/activity', {}, { mint: mint!, limit: 20 })]);
    const trades = actions.map((a: Parameters<typeof tradeRow>[0]) => tradeRow(a, coin.mint));
    return { title: coin.symbol ? `${coin.symbol} · ${coin.name ?? ''}` : coin.mint, data: { coin, trades }, mint: coin.mint };
  },
} satisfies BoardPage;
