import { burnBody, burnResponse } from '@svc/contracts';
import { burn } from '../../commands/burn';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/tokens/burn',
  auth: 'auth',
  tag: 'Tokens and trading',
  summary: 'Burn `percent` or `amount` of a holding; burning everything closes the token account',
  description: 'Same amount rules as sell: both is 400 invalid_request, neither 400 amount_required, holding none 400 no_balance.',
  body: burnBody,
  response: burnResponse,
  errors: ['invalid_pubkey', 'unknown_mint', 'amount_required', 'no_balance', 'insufficient', 'send_failed', 'tx_failed', 'unavailable'],
  async handle({ body, agentId, idempotencyKey }, services) {
    return { body: await burn(services, agentId, { ...body, idempotencyKey }) };
  },
});
