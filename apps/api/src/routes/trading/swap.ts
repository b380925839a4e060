import { swapBody, swapResponse } from '@svc/contracts';
import { swap } from '../../commands/trade';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/swap',
  auth: 'auth',
  tag: 'Tokens and trading',
  summary: 'Swap any mint for any other through the aggregator, coin to coin included',
  description:
    '`amount` is whole units of `input_mint` (SOL is the wrapped-SOL mint). The aggregator routes through SOL when no direct pool exists; its ' +
    'quote less `slippage_bps` (default 100) is the floor on the output, enforced on-chain. A coin between its curve and its pool has no route ' +
    'yet: 503 graduating with Retry-After.',
  body: swapBody,
  response: swapResponse,
  errors: ['invalid_pubkey', 'unknown_mint', 'no_balance', 'insufficient', 'send_failed', 'tx_failed', 'unavailable', 'graduating', 'aggregator_rejected', 'policy_limit'],
  async handle({ body, agentId, idempotencyKey }, services) {
    return { body: await swap(services, agentId, { ...body, idempotencyKey }) };
  },
});
