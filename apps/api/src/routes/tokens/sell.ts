import { sellBody, sellResponse } from '@svc/contracts';
import { sell } from '../../commands/trade';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/tokens/sell',
  auth: 'auth',
  tag: 'Tokens and trading',
  summary: 'Sell `percent` or `amount` of a holding back to SOL on the venue that trades it',
  description:
    'Send `percent` (0.01-100) or `amount` (whole tokens): both is 400 invalid_request, neither 400 amount_required, holding none 400 no_balance, ' +
    'more than held 400 insufficient. The quote less `slippage_bps` is the floor on the SOL, enforced on-chain. Selling everything closes the ' +
    'token account and returns its rent unless `close_token_account` is false. A graduating coin waits for its pool as a buy does.',
  body: sellBody,
  response: sellResponse,
  errors: ['invalid_pubkey', 'unknown_mint', 'amount_required', 'no_balance', 'insufficient', 'send_failed', 'tx_failed', 'unavailable', 'graduating', 'aggregator_rejected'],
  async handle({ body, agentId, idempotencyKey }, services) {
    return { body: await sell(services, agentId, { ...body, idempotencyKey }) };
  },
});
