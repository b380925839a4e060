import { Keypair, PublicKey, type AddressLookupTableAccount, type TransactionInstruction } from '@solana/web3.js';
import {
  PACKET_DATA_SIZE,
  balanceLamports,
  deployInstructions,
  lamportsToSol,
  rawToUi,
  solToLamports,
  transactionSize,
} from '@svc/chain';
import type { RequestOf, deployBody } from '@svc/contracts';
import { Rejected } from '@svc/domain';
import type { Services } from '../services';
import { hostDeployMetadata } from '../tokens/media';
import { deployTableOrRefuse } from '../treasury/deployTable';
import { defaultShares, shareFees, type FeeSharing } from './share';
import { beforeSending, networkFees, traderOf } from './trade';
import { actionReply, type ActionReply } from './transfer';

/** What a deploy needs beside the dev buy: the mint, curve and token accounts' rent, and the fees ("about 0.03 SOL"). */
export const DEPLOY_RESERVE_LAMPORTS = 30_000_000n;
export { CITIZEN_SHARE_BPS, TREASURY_SHARE_BPS } from './share';
const TOKEN_DECIMALS = 6;

export type DeployInput = RequestOf<typeof deployBody> & { idempotencyKey?: string };

function shortOfFunds(needed: bigint, available: bigint): Rejected {
  return new Rejected(
    'insufficient',
    `a deploy needs about ${lamportsToSol(needed)} SOL (0.03 SOL for rent and fees plus the dev buy); the wallet holds ${lamportsToSol(available)} SOL`,
    { needed_lamports: Number(needed), available_lamports: Number(available) },
  );
}

/**
 * A long name or URI needs the lookup table of the keys every deploy shares, and one too long even for that is
 * the request's to shorten (web3.js cannot serialize it at all).
 */
async function lookupTablesFor(services: Services, payer: PublicKey, instructions: TransactionInstruction[]): Promise<AddressLookupTableAccount[] | undefined> {
  const size = (lookupTables?: AddressLookupTableAccount[]) => transactionSize(payer, instructions, { lookupTables, addReference: false });
  if (size() <= PACKET_DATA_SIZE) return undefined;
  const lookupTables = [await deployTableOrRefuse(services)];
  if (size(lookupTables) > PACKET_DATA_SIZE) {
    throw new Rejected('invalid_request', `name, symbol and metadata_uri together are too long for one ${PACKET_DATA_SIZE}-byte transaction; shorten the metadata_uri`, {
      field: 'metadata_uri',
    });
  }
  return lookupTables;
}

/** A deploy's reply: the create transaction as an action, and where the coin's fee sharing stands. */
export type DeployReply = ActionReply & { fee_share: FeeSharing };

/**
 * POST /api/v1/tokens/deploy: a Token-2022 coin on a fresh pump bonding curve (`create_v2`) with its dev buy in
 * the same transaction, then, unless it keeps its whole creator fee, the fee-sharing config in a second one:
 * 9,000 bps to the citizen, 1,000 to the treasury. A sharing step that does not land leaves `fee_share.status`
 * pending, for POST /api/v1/tokens/{mint}/share to finish.
 */
export async function deploy(services: Services, agentId: string, input: DeployInput): Promise<DeployReply> {
  if (input.holder_reward && input.fee_share === true) {
    throw new Rejected('invalid_request', 'fee_share: a holder_reward coin pays its creator fee to its holders and cannot share it; leave fee_share out or false', {
      field: 'fee_share',
    });
  }
  const sharing = input.fee_share ?? !input.holder_reward;
  const trader = await traderOf(services, agentId);
  const connection = services.chain.connection;
  const devBuy = solToLamports(input.dev_buy_sol);
  const needed = DEPLOY_RESERVE_LAMPORTS + devBuy;
  const balance = await beforeSending(balanceLamports(connection, trader.owner));
  if (balance < needed) throw shortOfFunds(needed, balance);

  const hosted = input.metadata_uri
    ? { metadata_uri: input.metadata_uri, image: /^https:/i.test(input.image) ? input.image : null }
    : await hostDeployMetadata(services, input);
  // Under an Idempotency-Key a retry rebuilds the very mint it proposed before, so it resumes that deploy.
  const mint = input.idempotencyKey
    ? Keypair.fromSeed(services.serviceWallets.derive(`deploy-mint\n${agentId}\n${input.idempotencyKey}`))
    : Keypair.generate();
  const shares = sharing ? await defaultShares(services, trader.wallet) : [];
  const request = {
    mint: mint.publicKey,
    user: trader.owner,
    name: input.name,
    symbol: input.symbol,
    uri: hosted.metadata_uri,
    mayhem: input.mayhem,
    holderReward: input.holder_reward,
    devBuyLamports: devBuy,
    slippageBps: input.slippage_bps,
    priorityLamports: solToLamports(input.priority_fee_sol),
  };
  // Built before the row is reserved: the record states the quote its floor came from.
  const built = await beforeSending(deployInstructions(connection, request));
  const links = Object.fromEntries((['twitter', 'telegram', 'website'] as const).filter((k) => input[k]).map((k) => [k, input[k]!]));
  const summary = {
    mint: mint.publicKey.toBase58(),
    bonding_curve: built.bondingCurve.toBase58(),
    creator: built.creator.toBase58(),
    name: input.name,
    symbol: input.symbol,
    description: input.description ?? null,
    image: hosted.image,
    metadata_uri: hosted.metadata_uri,
    links,
    mayhem: input.mayhem,
    holder_reward: input.holder_reward,
    dev_buy: {
      sol: input.dev_buy_sol,
      quoted_tokens: rawToUi(built.quotedTokens, TOKEN_DECIMALS),
      min_tokens: rawToUi(built.minTokens, TOKEN_DECIMALS),
    },
    fee_share: { status: sharing ? 'pending' : 'off', shares },
  };
  const sign = input.execute && trader.custody === 'service';
  const created = await services.pipeline.run({
    action: 'deploy',
    agentId,
    wallet: trader.wallet,
    sign,
    idempotencyKey: input.idempotencyKey,
    request: { ...input, idempotencyKey: undefined },
    record: { type: 'RecordAction', agentId, data: { action: 'deploy', wallet: trader.wallet, details: summary } },
    summary,
    // The mint is the reference: no key is added.
    build: { kind: 'instructions', transaction: { instructions: built.instructions, signers: [mint], reference: mint.publicKey, lookupTables: await beforeSending(lookupTablesFor(services, trader.owner, built.instructions)) } },
    funds: { lamports: needed },
    spend: { lamports: devBuy, feeLamports: networkFees(request.priorityLamports) },
  });
  const reply = actionReply(created);
  const deployed = created.summary as typeof summary;
  if (!sharing) return { ...reply, fee_share: { status: 'off', shares: [], signature: null } };
  return { ...reply, fee_share: await shareFees(services, agentId, trader.wallet, new PublicKey(deployed.mint), deployed.fee_share.shares, sign, input.idempotencyKey) };
}
