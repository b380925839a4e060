import { feesResponse } from '@svc/contracts';
import { feesOf } from '../../commands/fees';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/api/v1/fees',
  auth: 'auth',
  tag: 'Fees and treasury',
  summary: 'Creator fees claimable now across every coin you deployed: in the vaults, and waiting to be distributed on each curve or pool',
  description:
    'Covers the coins you deployed here and those you opted into sharing (the newest 1,000). A sharing coin’s fees wait in its sharing ' +
    'config’s vaults (pump’s creator vault, and PumpSwap’s coin-creator vault once graduated) until a distribution pays each shareholder ' +
    'its share: `claimable_sol` is yours (9,000 bps by default). Every coin you created that does not share pays into your wallet’s own two ' +
    'vaults, which are not per coin: `creator_vault`. Vault lamports count above the rent the programs leave in them. Every vault of every ' +
    'coin is read in one batched getMultipleAccounts (100 keys a call). A sharing coin below pump’s minimum distributable fee is still listed ' +
    'here; POST /api/v1/fees/claim skips it until it reaches the minimum.',
  response: feesResponse,
  errors: ['unavailable'],
  consistentRead: ['tokens', 'agent_mints'],
  async handle({ agentId }, services) {
    return { body: await feesOf(services, agentId) };
  },
});
