import { transferBody, transferResponse } from '@svc/contracts';
import { transfer } from '../../commands/transfer';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/transfer',
  auth: 'auth',
  tag: 'Wallet',
  summary: 'Transfer SOL or a token to a citizen (handle or agent id) or any wallet; token transfers create the recipient’s token account when needed',
  description:
    'Moves `amount` whole units of `mint` (SOL when omitted) from the caller’s wallet, which also pays the network fee and, for a token the ' +
    'recipient has no account for yet, that account’s rent. `memo` goes on-chain as an SPL Memo and onto the public ledger with the transfer. ' +
    'Refusals before anything is sent: 400 invalid_pubkey (a malformed `to` or `mint`), 404 not_found (no such citizen), 404 unknown_mint, ' +
    '400 no_balance (the wallet holds none of the mint), 400 insufficient (with what is needed and available). On-chain failures are ' +
    '400 send_failed / tx_failed with the program logs. 503 unavailable with Retry-After when the chain cannot be reached (nothing was sent) ' +
    'or when the transfer was sent and its outcome is not settled yet (it is recorded automatically once it confirms); retrying with the same ' +
    'Idempotency-Key never transfers twice.',
  body: transferBody,
  response: transferResponse,
  errors: ['invalid_pubkey', 'not_found', 'unknown_mint', 'no_balance', 'insufficient', 'send_failed', 'tx_failed', 'unavailable', 'policy_limit'],
  async handle({ body, agentId, idempotencyKey }, services) {
    return { body: await transfer(services, agentId, { ...body, idempotencyKey }) };
  },
});
