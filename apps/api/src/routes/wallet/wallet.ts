import { PublicKey, SolanaJSONRPCError } from '@solana/web3.js';
import { rpcUnavailable } from '@svc/actions';
import { WRAPPED_SOL_MINT, isRpcUnreachable, lamportsToSol, walletHoldings, type WalletHoldings } from '@svc/chain';
import { walletResponse } from '@svc/contracts';
import { unauthorized } from '../../http/errors';
import { defineRoute } from '../../http/route';
import type { Services } from '../../services';

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

async function holdingsOf(services: Services, wallet: string): Promise<WalletHoldings> {
  try {
    return await walletHoldings(services.chain.connection, new PublicKey(wallet));
  } catch (error) {
    if (isRpcUnreachable(error) || error instanceof SolanaJSONRPCError) {
      throw rpcUnavailable(error, 'try again shortly');
    }
    throw error;
  }
}

export default defineRoute({
  method: 'get',
  path: '/api/v1/wallet',
  auth: 'auth',
  tag: 'Wallet',
  summary: 'The caller’s wallet: SOL, every SPL Token and Token-2022 holding, their USD prices and the portfolio’s value',
  description:
    'Balances are read from the chain at `confirmed` commitment, in one JSON-RPC batch. `holdings` has one entry per token account ' +
    'the wallet owns under either token program that holds a balance; empty token accounts (left behind after selling or sending ' +
    'everything) are not listed, and wrapped SOL in a token account is a holding of its mint, not part of `sol`. Prices come from the Jupiter-compatible price API (USD per whole token), looked up at most once a ' +
    'minute per mint; while the price source fails, the last price it gave stands in for up to five minutes. A mint the aggregator ' +
    'has no price for (or any mint while the price source is unreachable) has `price_usd` and `value_usd` null, as prices are null ' +
    'everywhere else in this API, and it counts 0 in `portfolio_usd`. `sol_usd` is the USD value of the SOL balance and ' +
    '`sol_price_usd` the price of one SOL; when SOL has no price, both and `portfolio_usd` are null. Values are not rounded. ' +
    '503 unavailable (with Retry-After) when the Solana RPC cannot be reached.',
  response: walletResponse,
  errors: ['unavailable'],
  async handle({ agentId }, services) {
    const citizen = await services.writer.read((s) => s.citizens.byId.get(agentId));
    if (!citizen) throw unauthorized();
    const { lamports, tokens } = await holdingsOf(services, citizen.wallet);
    const held = tokens.filter((token) => token.raw > 0n);
    const prices = await services.chain.usdPrices([WRAPPED_SOL_MINT, ...held.map((token) => token.mint)]);
    const solPrice = prices.get(WRAPPED_SOL_MINT) ?? null;
    const sol = lamportsToSol(lamports);
    const solUsd = solPrice === null ? null : sol * solPrice;
    const holdings = held
      .map((token) => {
        const price = prices.get(token.mint) ?? null;
        return {
          mint: token.mint,
          ui_amount: token.uiAmount,
          price_usd: price,
          value_usd: price === null ? null : token.uiAmount * price,
          amount: token.raw.toString(),
          decimals: token.decimals,
          account: token.account,
          token_program: token.programId,
        };
      })
      .sort((a, b) => (b.value_usd ?? -1) - (a.value_usd ?? -1) || byText(a.mint, b.mint) || byText(a.account, b.account));
    const portfolioUsd = solUsd === null ? null : holdings.reduce((sum, holding) => sum + (holding.value_usd ?? 0), solUsd);
    return { body: { wallet: citizen.wallet, sol, sol_usd: solUsd, sol_price_usd: solPrice, holdings, portfolio_usd: portfolioUsd } };
  },
});
