import { shareBody, shareResponse, tokenParams } from '@svc/contracts';
import { share } from '../../commands/share';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/tokens/{mint}/share',
  auth: 'auth',
  tag: 'Tokens and trading',
  summary: 'Opt a coin you created (here or elsewhere on pump) into creator-fee sharing: 9,000 bps to you, 1,000 to the treasury',
  description:
    'Sends pump-fees’ create_fee_sharing_config (naming the PumpSwap pool once the coin graduated, so the pool’s creator fees are shared too) ' +
    'and update_fee_shares, as the `fee_share` action; the split can be set once. Idempotent: a coin that shares already answers ' +
    '`already_sharing: true` with the shares its on-chain config holds, and sends nothing. It finishes a deploy whose `fee_share.status` is ' +
    '`pending`: while the sharing transaction that deploy handed out can still land, asking with `execute=false` (or as a custody=self ' +
    'citizen) hands the same transaction out again. Once it lands the coin’s `fee_share.status` is `active` in GET /api/v1/tokens/{mint}. ' +
    'Errors: 400 invalid_pubkey (malformed mint), 404 unknown_mint (no such mint), 400 invalid_request (no pump bonding curve; a ' +
    'holder_reward coin, whose creator fee goes to its holders; a completed curve not yet migrated), 403 not_creator (the coin’s creator — ' +
    'its sharing config’s admin once it has one — is not your wallet), 409 action_in_progress (its sharing transaction is being sent, or was ' +
    'handed out unsigned and you asked to execute), 400 insufficient (about 0.002 SOL of rent and fees).',
  params: tokenParams,
  body: shareBody,
  response: shareResponse,
  consistentRead: ['tokens'],
  errors: ['invalid_pubkey', 'unknown_mint', 'invalid_request', 'not_creator', 'action_in_progress', 'insufficient', 'send_failed', 'tx_failed', 'unavailable'],
  async handle({ params, body, agentId, idempotencyKey }, services) {
    return { body: await share(services, agentId, { mint: params.mint, execute: body.execute, idempotencyKey }) };
  },
});
