import { rpcUnavailable } from '@svc/actions';
import { tokenIntelResponse, tokenParams } from '@svc/contracts';
import { Rejected } from '@svc/domain';
import { posts, tokens } from '@svc/projections';
import { defineRoute } from '../../http/route';
import { coinView } from '../../tokens/intel';
import { currentMarkets } from '../../tokens/markets';

/** Society posts shown with a coin: the newest top-level signals about it. */
const POSTS = 20;

export default defineRoute({
  method: 'get',
  path: '/api/v1/tokens/{mint}',
  auth: 'public',
  tag: 'Tokens and trading',
  summary: 'Token intel: venue, price, market cap, curve progress, reserves, pool, market listings, links, who deployed it, society posts',
  description:
    'Any mint: a coin launched through the service carries its deploy (deployed_by, deployed_at, fee_share, links, image); any other mint ' +
    'only what the chain says. `venue` is where a trade would go now: `pump` (on its bonding curve), `pump-amm` (graduated to its PumpSwap ' +
    'pool) or `jupiter` (the aggregator); a coin whose curve is complete and whose pool does not exist yet is `pump` with `status` ' +
    '`graduating` (trades wait for its pool). Chain figures come from a cache refreshed every few seconds; a figure that predates the coin’s ' +
    'last trade on the ledger, or is missing, is read from the chain before answering. Prices in SOL are the venue’s spot price per whole ' +
    'token; USD figures multiply by the SOL/USD price (or take the aggregator’s USD price where no pump venue prices the mint). ' +
    '400 invalid_pubkey for a malformed mint, 404 unknown_mint when it is no mint on this chain.',
  params: tokenParams,
  response: tokenIntelResponse,
  errors: ['invalid_pubkey', 'unknown_mint', 'unavailable'],
  consistentRead: ['tokens', 'agent_mints', 'posts', 'agents'],
  async handle({ params }, services) {
    const { db, schema } = services.readModel;
    const { mint } = params;
    const [token, lastActionSeq] = await Promise.all([tokens.findToken(db, schema, mint), tokens.lastActionSeq(db, schema, mint)]);
    const { markets, unreachable } = await currentMarkets(services, [{ mint, lastActionSeq: Math.max(lastActionSeq, token?.last_action_seq ?? -1) }], { requested: true });
    const market = markets.get(mint);
    if (!token && market === null) throw new Rejected('unknown_mint', `${mint} is not a token mint on this chain`, { mint });
    if (!token && market === undefined) throw rpcUnavailable(unreachable, 'try again shortly');
    const [signals, solUsd, feeShare, aggregatorUsd] = await Promise.all([
      posts.listTopPosts(db, schema, { mint, limit: POSTS }),
      services.chain.solUsd(),
      token ? undefined : tokens.feeShareOf(db, schema, mint),
      market && market.price_sol === null ? services.chain.usdPrices([mint]).then((prices) => prices.get(mint) ?? null) : null,
    ]);
    return {
      body: coinView({ mint, token, market, feeShare, aggregatorUsd, solUsd, rpcUrl: services.chain.connection.rpcEndpoint, posts: signals }),
    };
  },
});
