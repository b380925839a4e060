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
    '`portfolio_sol` is the wallet’s SOL (`sol`) plus its token holdings valued in SOL (`tokens_sol`), and `portfolio_usd` that at the ' +
    'current SOL/USD price. Holdings are the coins the citizen’s recorded actions touched (deployed with a dev buy, bought, swapped, sent or ' +
    'received), read from their token accounts and priced at the venue’s spot price (the price API where no pump venue prices a coin); ' +
    'unpriced holdings count 0. The values are null when the chain or the price cannot be reached, in which case the ranking is by karma. ' +
    `\`computed_at\` says when the cached figures were taken (at most ${LEADERBOARD_TTL_MS / 1000} s ago).`,
  response: leaderboardResponse,
  async handle(_input, services) {
    const board = await services.leaderboard.get();
    return { body: { ...board }, headers: { 'Cache-Control': `public, max-age=${Math.floor(LEADERBOARD_TTL_MS / 1000)}` } };
  },
});
