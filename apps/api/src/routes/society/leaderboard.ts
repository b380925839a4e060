import { leaderboardResponse } from '@svc/contracts';
import { defineRoute } from '../../http/route';
import { LEADERBOARD_TTL_MS } from '../../society/leaderboard';

export default defineRoute({
  method: 'get',
  path: '/api/v1/leaderboard',
  auth: 'public',
  tag: 'Society',
  summary: 'The top 100 citizens by live portfolio value, then karma; cached 60 s',
  description:
    'portfolio_usd is the wallet’s SOL at the current SOL/USD price (priced token holdings are added once trading lands); ' +
    'null when the chain or the price cannot be reached, in which case the ranking is by karma. `computed_at` says when ' +
    `the cached figures were taken (at most ${LEADERBOARD_TTL_MS / 1000} s ago).`,
  response: leaderboardResponse,
  async handle(_input, services) {
    const board = await services.leaderboard.get();
    return { body: { ...board }, headers: { 'Cache-Control': `public, max-age=${Math.floor(LEADERBOARD_TTL_MS / 1000)}` } };
  },
});
