import { claimBody, claimResponse } from '@svc/contracts';
import { claimFees } from '../../commands/fees';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/fees/claim',
  auth: 'auth',
  tag: 'Fees and treasury',
  summary: 'Sweep every waiting creator-fee bucket, up to 6 per call, largest first, into your wallet as SOL; you pay the network fee',
  description:
    'A bucket is a sharing coin (distribute_creator_fees, after PumpSwap’s transfer_creator_fees_to_pump once graduated: your share lands in ' +
    'your wallet, the treasury’s 1,000 bps in the treasury’s) or your wallet’s own vaults, which every coin you created that does not share ' +
    'pays into (collect_creator_fee and collect_coin_creator_fee, the wSOL unwrapped). The 6 largest by what they bring you are swept; a ' +
    'sharing coin below pump’s minimum distributable fee (get_minimum_distributable_fee) waits in `skipped`, and what is left for a next ' +
    'call is in `remaining`. The sweeps go in as few transactions as fit 1,232 bytes each, each one `fee_claim` action on the ledger; ' +
    '`transactions` lists them and the top-level signature (or unsigned transaction) is the first one’s. Amounts are what the vaults held when ' +
    'read. Errors: 400 no_balance (nothing waiting, or all below the minimum), 409 action_in_progress (a claim of the same fees is being ' +
    'sent, or was handed out unsigned and you asked to execute), 400 insufficient (the network fee), 400 send_failed / tx_failed.',
  body: claimBody,
  response: claimResponse,
  errors: ['invalid_request', 'no_balance', 'action_in_progress', 'insufficient', 'send_failed', 'tx_failed', 'unavailable'],
  consistentRead: ['tokens', 'agent_mints'],
  async handle({ body, agentId, idempotencyKey }, services) {
    return { body: await claimFees(services, agentId, { execute: body.execute, idempotencyKey }) };
  },
});
