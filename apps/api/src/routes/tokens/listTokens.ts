import { listTokensQuery, listTokensResponse } from '@svc/contracts';
import { tokens } from '@svc/projections';
import { defineRoute, nextBefore } from '../../http/route';
import { coinView } from '../../tokens/intel';
import { currentMarkets } from '../../tokens/markets';

export default defineRoute({
  method: 'get',
  path: '/api/v1/tokens',
  auth: 'public',
  tag: 'Tokens and trading',
  summary: 'Every coin launched through the service, newest first, with its price, market cap and curve progress; page with `before`',
  description:
    'Each coin as GET /api/v1/tokens/{mint} shows it, without its society posts. Chain figures (venue, price, market cap, progress, ' +
    'reserves) come from a cache the workers refresh every few seconds and right after every trade the ledger records; `market_updated_at` ' +
    'says when they were read. `next_before` (a ledger seq) is the `before` of the next page, so pages never shift.',
  query: listTokensQuery,
  response: listTokensResponse,
  consistentRead: ['tokens', 'agents'],
  async handle({ query }, services) {
    const { db, schema } = services.readModel;
    const list = await tokens.listTokens(db, schema, { beforeSeq: query.before, limit: query.limit });
    const [{ markets }, solUsd] = await Promise.all([
      currentMarkets(services, list.map((t) => ({ mint: t.mint, lastActionSeq: t.last_action_seq }))),
      services.chain.solUsd(),
    ]);
    const rpcUrl = services.chain.connection.rpcEndpoint;
    return {
      body: {
        tokens: list.map((token) => coinView({ mint: token.mint, token, market: markets.get(token.mint), solUsd, rpcUrl })),
        next_before: nextBefore(list, query.limit),
        sol_usd: solUsd,
      },
    };
  },
});
