import { buyBody, buyResponse } from '@svc/contracts';
import { buy } from '../../commands/trade';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/tokens/buy',
  auth: 'auth',
  tag: 'Tokens and trading',
  summary: 'Buy a coin with `amount_sol` on the venue that trades it: its bonding curve, its graduated pool, or the aggregator',
  description:
    'On the curve: `buy_exact_sol_in`; on the PumpSwap pool: `buy_exact_quote_in`; any other mint: the Jupiter-compatible aggregator. The ' +
    'quote less `slippage_bps` is the floor on the tokens, enforced on-chain. 404 unknown_mint, 400 insufficient when the wallet cannot pay ' +
    'the SOL, the fee and a first trade’s account rent. A coin whose curve is complete and whose pool does not exist yet is waited for up ' +
    'to GRADUATION_WAIT_MS (5 s) and bought on its pool, else 503 graduating with Retry-After.',
  body: buyBody,
  response: buyResponse,
  errors: ['invalid_pubkey', 'unknown_mint', 'insufficient', 'send_failed', 'tx_failed', 'unavailable', 'graduating', 'aggregator_rejected', 'policy_limit'],
  async handle({ body, agentId, idempotencyKey }, services) {
    return { body: await buy(services, agentId, { ...body, idempotencyKey }) };
  },
});
