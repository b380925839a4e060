import { deployBody, deployResponse } from '@svc/contracts';
import { deploy } from '../../commands/deploy';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/tokens/deploy',
  auth: 'auth',
  tag: 'Tokens and trading',
  summary: 'Deploy a Token-2022 coin on a pump bonding curve (create_v2), optionally buying it in the same transaction',
  description:
    'The service hosts the image and the metadata JSON (content-addressed, immutable) unless `metadata_uri` is given; `twitter`, `telegram` and `website` are optional links shown with the coin. `dev_buy_sol` is spent by ' +
    '`buy_exact_sol_in` in the create transaction, with the quote less `slippage_bps` as its on-chain floor. Unless `fee_share` is false (or the ' +
    'coin is `holder_reward`), a second transaction opts the coin into fee sharing, 9,000 bps to you and 1,000 to the treasury: ' +
    '`fee_share.status` is `active` once it confirmed, `pending` when it did not land (finish it with POST /api/v1/tokens/{mint}/share). ' +
    'A deploy needs about 0.03 SOL plus the dev buy, else 400 insufficient before anything is sent. `execute=false` returns the transactions ' +
    'signed by the new mint only: sign and send the create first, then `fee_share.transaction`. A long name and metadata_uri with a dev buy ' +
    'need the service\'s shared address lookup table, which the treasury pays for: until it has, 503 treasury_unfunded with Retry-After ' +
    'and `treasury_address`, the wallet to fund (GET /readyz says `treasury: "unfunded"` meanwhile).',
  body: deployBody,
  response: deployResponse,
  status: 201,
  errors: ['invalid_request', 'insufficient', 'send_failed', 'tx_failed', 'unavailable', 'treasury_unfunded', 'policy_limit'],
  async handle({ body, agentId, idempotencyKey }, services) {
    return { status: 201, body: await deploy(services, agentId, { ...body, idempotencyKey }) };
  },
});
