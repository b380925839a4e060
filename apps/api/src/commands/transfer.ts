import { PublicKey, SystemProgram } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { rpcUnavailable, type ActionOutcome } from '@svc/actions';
import { ChainError, isRpcUnreachable, memoInstruction, mintInfo, parsePublicKey, rawToUi, tokenTransferInstructions, uiToRaw, type Funds } from '@svc/chain';
import type { RequestOf, transferBody } from '@svc/contracts';
import { Rejected, type Citizen } from '@svc/domain';
import type { Services } from '../services';
import { networkFees } from './trade';

const HANDLE = /^[A-Za-z0-9_-]{2,31}$/;
const SOL_DECIMALS = 9;

export type TransferInput = RequestOf<typeof transferBody> & { idempotencyKey?: string };

/** `to` as a wallet: a citizen's handle or agent id at the ledger head, or any base58 address. */
async function recipientOf(services: Services, to: string): Promise<{ wallet: PublicKey; agentId: string | null; handle: string | null }> {
  const citizen = await services.writer.read((state): Citizen | undefined => {
    const byHandle = HANDLE.test(to) ? state.citizens.byHandle.get(to.toLowerCase()) : undefined;
    const id = byHandle ?? (to.startsWith('agent_') ? to : undefined);
    return id ? state.citizens.byId.get(id) : undefined;
  });
  if (citizen) return { wallet: new PublicKey(citizen.wallet), agentId: citizen.agentId, handle: citizen.handle };
  // Base58 keys are 32-44 characters; anything shorter that looks like a handle is a citizen that does not exist.
  if (to.startsWith('agent_') || (HANDLE.test(to) && to.length < 32)) throw new Rejected('not_found', `no citizen ${to}`, { field: 'to' });
  const wallet = parsePublicKey(to, 'to');
  const owner = await services.writer.read((state) => {
    const id = state.citizens.byWallet.get(wallet.toBase58());
    return id === undefined ? undefined : state.citizens.byId.get(id);
  });
  return { wallet, agentId: owner?.agentId ?? null, handle: owner?.handle ?? null };
}

/**
 * What a transfer takes out of the wallet: the SOL itself, or the tokens plus the rent of the recipient's token
 * account if it has none yet (an associated token account is 165 bytes, 170 under Token-2022 for its
 * ImmutableOwner extension).
 */
function fundsOf(raw: bigint, token?: { mint: PublicKey; programId: PublicKey; decimals: number; to: PublicKey }): Funds {
  if (!token) return { lamports: raw, chainRefuses: true };
  const destination = getAssociatedTokenAddressSync(token.mint, token.to, false, token.programId);
  return {
    lamports: 0n,
    opens: [{ address: destination, bytes: token.programId.equals(TOKEN_2022_PROGRAM_ID) ? 170 : 165 }],
    tokens: { mint: token.mint, tokenProgram: token.programId, raw, decimals: token.decimals },
  };
}

/**
 * POST /api/v1/transfer: SOL or any SPL / Token-2022 token from the caller's wallet to a citizen or an
 * address, with an optional memo that goes on-chain (SPL Memo) and onto the ledger. Runs on the action
 * pipeline, so a retried request never transfers twice and a confirmed transfer is never lost.
 */
export async function transfer(services: Services, agentId: string, input: TransferInput): Promise<ActionReply> {
  const sender = (await services.writer.read((state) => state.citizens.byId.get(agentId)))!;
  const owner = new PublicKey(sender.wallet);
  const mint = input.mint === undefined ? undefined : parsePublicKey(input.mint, 'mint');
  let recipient = await recipientOf(services, input.to);
  if (!recipient.agentId && !recipient.wallet.equals(owner)) {
    // Registered through another API process just now? Look at the true head before calling it a stranger.
    await services.writer.sync();
    recipient = await recipientOf(services, input.to);
  }
  if (recipient.wallet.equals(owner)) throw new Rejected('invalid_request', 'to is your own wallet', { field: 'to' });
  const connection = services.chain.connection;

  let info: { programId: PublicKey; decimals: number } | undefined;
  try {
    info = mint ? await mintInfo(connection, mint) : undefined;
  } catch (error) {
    if (!(error instanceof Rejected) && !(error instanceof ChainError) && isRpcUnreachable(error)) throw rpcUnavailable(error);
    throw error;
  }
  const raw = uiToRaw(input.amount, info?.decimals ?? SOL_DECIMALS);
  const to = recipient.wallet;
  const summary = {
    from: owner.toBase58(),
    to: to.toBase58(),
    to_agent_id: recipient.agentId,
    amount: rawToUi(raw, info?.decimals ?? SOL_DECIMALS),
    mint: mint?.toBase58() ?? null,
    memo: input.memo ?? null,
  };
  const outcome = await services.pipeline.run({
    action: 'transfer',
    agentId,
    wallet: sender.wallet,
    sign: input.execute && sender.custody === 'service',
    idempotencyKey: input.idempotencyKey,
    record: { type: 'RecordAction', agentId, data: { action: 'transfer', wallet: sender.wallet, details: summary } },
    summary,
    build: {
      kind: 'instructions',
      transaction: {
        instructions: [
          ...(mint && info ? tokenTransferInstructions({ owner, to, mint, programId: info.programId, decimals: info.decimals, raw }) : [SystemProgram.transfer({ fromPubkey: owner, toPubkey: to, lamports: raw })]),
          ...(input.memo ? [memoInstruction(input.memo, owner)] : []),
        ],
      },
    },
    funds: fundsOf(raw, mint && info ? { mint, programId: info.programId, decimals: info.decimals, to } : undefined),
    // A token transfer moves no SOL, but its recipient is still one the policy must allow.
    spend: { lamports: mint ? 0n : raw, feeLamports: networkFees(0n), recipient: { wallet: to.toBase58(), handle: recipient.handle } },
  });
  return actionReply(outcome);
}

export type Sent = Pick<Extract<ActionOutcome, { executed: true }>, 'executed' | 'signature' | 'explorer' | 'ledger'>;
export type HandedOut = Pick<Extract<ActionOutcome, { executed: false }>, 'executed' | 'transaction' | 'fee_payer' | 'reference' | 'last_valid_block_height'>;

/**
 * The reply of an action: the public facts its command summed it up in, as its outbox row keeps them (a retry that
 * resumed an earlier attempt answers that attempt's), and either the executed transaction or the one handed out.
 */
export type ActionReply = ActionOutcome['summary'] & (Sent | HandedOut);

export function actionReply(outcome: ActionOutcome): ActionReply {
  if (outcome.executed) {
    return { ...outcome.summary, executed: true, signature: outcome.signature, explorer: outcome.explorer, ledger: outcome.ledger };
  }
  const { transaction, fee_payer, reference, last_valid_block_height } = outcome;
  return { ...outcome.summary, executed: false, transaction, fee_payer, reference, last_valid_block_height };
}
