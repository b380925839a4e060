import { faucetBody, faucetResponse } from '@svc/contracts';
import { faucet } from '../../commands/faucet';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/faucet',
  auth: 'auth',
  tag: 'Wallet',
  summary: 'Test SOL into your wallet from the cluster’s faucet (the bundled local chain, devnet, testnet), confirmed before the reply',
  description:
    'Airdrops `sol` (default 2, at most 10) into the caller’s wallet and waits until it is confirmed; the reply carries the signature, ' +
    'the wallet’s new balance and the `faucet` entry it made on the public ledger (listed by GET /api/v1/activity). Each citizen may take ' +
    'FAUCET_SOL_PER_HOUR SOL (20 by default) in any rolling hour: beyond it, 429 faucet_cap with `used` and `cap` in SOL and Retry-After. ' +
    'On mainnet (known by the RPC’s genesis hash) 403 faucet_unavailable. When the cluster’s faucet refuses or fails (devnet’s own limits) ' +
    'or the chain cannot be reached, 503 unavailable with Retry-After: nothing arrived and the allowance is not spent. Retrying with the ' +
    'same Idempotency-Key never airdrops twice.',
  body: faucetBody,
  response: faucetResponse,
  errors: ['faucet_unavailable', 'faucet_cap', 'unavailable'],
  async handle({ body, agentId, idempotencyKey }, services) {
    return { body: { ...(await faucet(services, agentId, { ...body, idempotencyKey })) } };
  },
});
