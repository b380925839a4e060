import { candlesQuery, candlesResponse, tokenParams } from '@svc/contracts';
import { candles } from '@svc/projections';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/api/v1/tokens/{mint}/candles',
  auth: 'public',
  tag: 'Tokens and trading',
  summary: 'OHLCV candles of a coin’s recorded trades: the newest `limit`, oldest first',
  description:
    '`interval` 1m, 5m or 1h; `t` is the bucket start in unix seconds by the time each trade was recorded. Prices are SOL per whole ' +
    'token as each trade moved (a citizen’s trade at its quote, a treasury buyback as the chain showed it); volume in SOL. A coin ' +
    'without trades has `candles: []`.',
  params: tokenParams,
  query: candlesQuery,
  response: candlesResponse,
  errors: ['invalid_pubkey'],
  consistentRead: ['candles'],
  async handle({ params, query }, { readModel }) {
    const list = await candles.candlesOf(readModel.db, readModel.schema, params.mint, query.interval, query.limit);
    return { body: { mint: params.mint, interval: query.interval, candles: list } };
  },
});
