import { createBurnCheckedInstruction, createCloseAccountInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { mintInfo, parsePublicKey, rawToUi } from '@svc/chain';
import type { RequestOf, burnBody } from '@svc/contracts';
import type { Services } from '../services';
import { amountToMove, beforeSending, runTrade, traderOf } from './trade';
import type { ActionReply } from './transfer';

export type BurnInput = RequestOf<typeof burnBody> & { idempotencyKey?: string };

/** POST /api/v1/tokens/burn: destroys `percent` or `amount` of the holding; burning everything closes the token account. */
export async function burn(services: Services, agentId: string, input: BurnInput): Promise<ActionReply> {
  const trader = await traderOf(services, agentId);
  const mint = parsePublicKey(input.mint, 'mint');
  const connection = services.chain.connection;
  const info = await beforeSending(mintInfo(connection, mint));
  const { raw, all } = await amountToMove(connection, trader.owner, mint, info, input);
  const summary = {
    mint: mint.toBase58(),
    burned_tokens: rawToUi(raw, info.decimals),
    supply_before: rawToUi(info.supply, info.decimals),
    supply_after_estimate: rawToUi(info.supply - raw, info.decimals),
    closed_token_account: all,
  };
  const account = getAssociatedTokenAddressSync(mint, trader.owner, true, info.programId);
  const burnIx = createBurnCheckedInstruction(account, mint, trader.owner, raw, info.decimals, [], info.programId);
  const instructions = all ? [burnIx, createCloseAccountInstruction(account, trader.owner, trader.owner, [], info.programId)] : [burnIx];
  return runTrade(services, trader, 'burn', input, summary, { build: { kind: 'instructions', transaction: { instructions } }, funds: { lamports: 0n } });
}
