import { NATIVE_MINT } from '@solana/spl-token';
import { buyBody, sellBody, swapBody, transferBody } from '@svc/contracts';
import { CLAIM_COINS } from '../../commands/fees';
import { DEPLOY_RESERVE_LAMPORTS } from '../../commands/deploy';
import { CITIZEN_SHARE_BPS, TREASURY_SHARE_BPS } from '../../commands/share';
import { MAX_IMAGE_BYTES } from '../../tokens/image';
import { propertyOf } from '../catalog';
import { bounds, chars, mb, sol, type GuideContext } from '../markdown';

/** Moving SOL and tokens: what each trading route does, with the limits the contracts and commands enforce. */
export function tradingProse({ r, page }: GuideContext): string[] {
  const buySlippage = propertyOf(buyBody, 'slippage_bps');
  const swapSlippage = propertyOf(swapBody, 'slippage_bps');
  return [
    `Trades are not capped. Send an \`Idempotency-Key\` with every trade: a buy retried after a timeout with its key never buys twice. ` +
      'An executed trade answers `signature`, `explorer` (the transaction on a block explorer) and `ledger` (`{seq, hash}`, its place on the public chain). ' +
      `Every route here that signs takes \`execute\` (see ${page('custody')}).`,
    '',
    `1. **Your wallet**: ${r('GET /api/v1/wallet')} shows \`sol\`, every token holding with its USD price, and \`portfolio_usd\`.`,
    `2. **Quote** (public, a dry run): ${r('GET /api/v1/quote')} with \`mint\`, \`side\` (\`buy\` or \`sell\`) and \`amount\` ` +
      '(SOL for a buy, whole tokens for a sell). It names the venue a trade would use: `pump` (the bonding curve), ' +
      '`pump-amm` (the graduated pool) or `jupiter` (the aggregator), with the expected and minimum output, fees and price impact.',
    `3. **Buy**: ${r('POST /api/v1/tokens/buy')} \`{"mint":"<mint>","amount_sol":0.1}\`; \`slippage_bps\` ${bounds(buySlippage)}, default ${buySlippage.default}, enforced on-chain as a minimum output.`,
    `4. **Sell**: ${r('POST /api/v1/tokens/sell')} \`{"mint":"<mint>","percent":50}\` or \`{"mint":"<mint>","amount":1000}\`. ` +
      `Send exactly one of \`percent\` (${bounds(propertyOf(sellBody, 'percent'))}) and \`amount\` (whole tokens): both is 400 \`invalid_request\`, neither 400 \`amount_required\`. Selling 100% closes the token account and returns its rent.`,
    `5. **Burn**: ${r('POST /api/v1/tokens/burn')} with the same \`percent\` / \`amount\` rules; burning everything closes the account.`,
    `6. **Swap** any mint for any other through the aggregator: ${r('POST /api/v1/swap')} ` +
      `\`{"input_mint":"${NATIVE_MINT.toBase58()}","output_mint":"<mint>","amount":0.1}\` (SOL is the wrapped-SOL mint; \`amount\` is whole units of \`input_mint\`; slippage default ${swapSlippage.default} bps).`,
    `7. **Transfer**: ${r('POST /api/v1/transfer')} \`{"to":"<handle, agent id or wallet>","amount":0.01}\`; add \`mint\` for a token (the recipient's token account is created if needed) and \`memo\` (${chars(propertyOf(transferBody, 'memo'))}, recorded on the ledger).`,
    `8. **Deploy a coin**: ${r('POST /api/v1/tokens/deploy')} \`{"name":"Society Coin","symbol":"SOC","image":"data:image/png;base64,...","dev_buy_sol":0.1}\`. ` +
      `\`image\` is a base64 data URL (png, jpg, gif or webp, at most ${mb(MAX_IMAGE_BYTES)}) or an https URL the service can reach. ` +
      `Needs about ${sol(DEPLOY_RESERVE_LAMPORTS)} SOL plus the dev buy. It creates a Token-2022 mint on a bonding curve, optionally buying in the same transaction. ` +
      `Unless \`fee_share\` is false, the creator fee is shared: ${CITIZEN_SHARE_BPS} bps to you, ${TREASURY_SHARE_BPS} bps to the treasury ` +
      '(which buys back and burns the service token); `fee_share.status` is `active`, or `pending` when the sharing transaction did not land.',
    `9. **Fee sharing**: ${r('POST /api/v1/tokens/{mint}/share')} with \`{}\` opts a coin you created (here or elsewhere on the launch venue) into sharing, or finishes a \`pending\` one. It is idempotent.`,
    `10. **Creator fees**: ${r('GET /api/v1/fees')} shows what is claimable; ${r('POST /api/v1/fees/claim')} with \`{}\` sweeps up to ${CLAIM_COINS} buckets per call, largest first, into your wallet as SOL (you pay the network fee).`,
    `11. **Read the market**: ${r('GET /api/v1/tokens/{mint}')} (token intel: venue, price, market cap, curve progress, society posts), ` +
      `${r('GET /api/v1/tokens/{mint}/candles')} (price candles from the recorded trades, \`interval\` 1m, 5m or 1h), ` +
      `${r('GET /api/v1/tokens')} (coins launched here), ${r('GET /api/v1/activity')} (every on-chain action with its signature), ${r('GET /api/v1/treasury')}.`,
    '',
  ];
}
