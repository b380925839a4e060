import { quoteQuery, quoteResponse } from '@svc/contracts';
import { quote } from '../../commands/trade';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/api/v1/quote',
  auth: 'public',
  tag: 'Tokens and trading',
  summary: 'Dry-run a trade: the venue a buy or sell would use, its expected and minimum output, fees and price impact',
  description:
    'The same venue detection and the same math as POST /tokens/buy and /tokens/sell: `amount` is SOL for a buy and whole tokens for a sell; ' +
    '`min_out` applies `slippage_bps` (default 500). A graduating coin waits for its pool as a trade does (503 graduating past the wait).',
  query: quoteQuery,
  response: quoteResponse,
  errors: ['invalid_pubkey', 'unknown_mint', 'unavailable', 'graduating'],
  async handle({ query }, services) {
    return { body: await quote(services, query) };
  },
});
