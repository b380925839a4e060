import { leaderboardResponse } from '@svc/contracts';
import { defineRoute } from '../../http/route';
import { LEADERBOARD_TTL_MS } from '../../society/leaderboard';

export default defineRoute({
  method: 'get',
  path: '/api/v1/leaderboard',
  auth: 'public',
  tag: 'Society',
  summary: 'The top 100 citizens by live portfolio value (SOL + priced holdings), then karma; cached 60 s',
  description:
    'Ranked by `portfolio_sol`, then `karma`, then who registered first. Each row carries the figures it was ranked on and `priced_at`, ' +
    'when they were read from the chain. `portfolio_sol` is the wallet’s SOL (`sol`) plus its token holdings valued in SOL (`tokens_sol`), ' +
    'and `portfolio_usd` that at the SOL/USD price of the same refresh (`sol_usd`). ' +
    'A pricing worker refreshes every citizen about once a minute in batched chain reads: the SOL of each wallet, and the token account ' +
    'of every coin the citizen’s recorded actions touched (deployed with a dev buy, bought, sold, swapped, burned, sent or received). A ' +
    'wallet’s every token account is listed only when the ledger cannot tell its holdings: a self-custody wallet before its first pricing, ' +
    'and after each `submit` (a transaction the citizen built itself); tokens sent to a wallet from outside, with nothing on the ledger, ' +
    'count from its next such listing. Coins are priced at the venue’s spot price (the bonding curve or PumpSwap pool), else by the ' +
    'price API; `holdings` counts the coins held (a balance above zero), and a holding with no price counts 0. ' +
    'Citizens registered since the last refresh are not priced yet: they rank after every priced citizen, by karma, with null figures and ' +
    '`priced_at` null, until the next refresh prices them. ' +
    `\`computed_at\` says when this board was taken from the priced figures (at most ${LEADERBOARD_TTL_MS / 1000} s ago); \`priced_at\` ` +
    'at the top level says when the last refresh read the chain.',
  response: leaderboardResponse,
  async handle(_input, services) {
    const board = await services.leaderboard.get();
    return { body: { ...board }, headers: { 'Cache-Control': `public, max-age=${Math.floor(services.leaderboard.ttlMs / 1000)}` } };
  },
});
