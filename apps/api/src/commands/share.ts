import { PublicKey, LAMPORTS_PER_SOL } from '@solana/web3.js';
import type { ActionOutcome } from '@svc/actions';
import { feeShareInstructions, parsePublicKey, readCoinSharing, updateSharesInstruction, type CoinSharing } from '@svc/chain';
import type { RequestOf, shareBody, tokenParams } from '@svc/contracts';
import { Rejected } from '@svc/domain';
import { tokens } from '@svc/projections';
import { TREASURY_WALLET } from '@svc/runtime';
import type { OutboxRow } from '@svc/vault';
import type { Services } from '../services';
import { runHeldAction, type HeldRequest } from './heldAction';
import { beforeSending, traderOf } from './trade';
import { actionReply, type ActionReply, type HandedOut } from './transfer';

/** The default split of a sharing coin's creator fee. */
export const CITIZEN_SHARE_BPS = 9_000;
export const TREASURY_SHARE_BPS = 1_000;
/** What the sharing config's rent and the fee come to, about: checked before anything is sent. */
const SHARING_RESERVE_LAMPORTS = BigInt(LAMPORTS_PER_SOL / 500);

export interface Share {
  address: string;
  share_bps: number;
}

/** 9,000 bps to the citizen's wallet, 1,000 to the treasury's. */
export async function defaultShares(services: Services, wallet: string): Promise<Share[]> {
  const treasury = (await services.serviceWallets.wallet(TREASURY_WALLET)).publicKey;
  return [
    { address: wallet, share_bps: CITIZEN_SHARE_BPS },
    { address: treasury, share_bps: TREASURY_SHARE_BPS },
  ];
}

interface ShareAction {
  agentId: string;
  wallet: string;
  mint: PublicKey;
  shares: Share[];
  sign: boolean;
  idempotencyKey: string | undefined;
  /** The graduated coin's pool, which the config must name to take its creator fees over too. */
  pool?: PublicKey | null;
  /** A config exists already with its admin not revoked: only its shares are set, replacing these shareholders. */
  configured?: PublicKey[];
}

function heldBy(holder: OutboxRow, mint: PublicKey): Rejected {
  if (holder.state === 'unsigned') {
    return new Rejected(
      'action_in_progress',
      `an unsigned sharing transaction for ${mint.toBase58()} was handed out and can land until block height ${holder.lastValidBlockHeight}: ` +
        'sign and send it (POST /api/v1/tx/submit), or ask again once it has expired',
      { reference: holder.reference, last_valid_block_height: holder.lastValidBlockHeight },
    );
  }
  return new Rejected('action_in_progress', `the sharing transaction for ${mint.toBase58()} is being sent; ask again in a moment`, holder.signature ? { signature: holder.signature } : {});
}

/**
 * The sharing config of a coin the citizen created, as the `fee_share` action (one per coin: its hold): signed and
 * sent, or handed out unsigned. Asked again while an unsigned one is outstanding, it hands that one out again.
 */
async function runShare(services: Services, action: ShareAction): Promise<ActionOutcome> {
  const { agentId, wallet, mint, shares, sign } = action;
  const creator = new PublicKey(wallet);
  const details = { mint: mint.toBase58(), status: 'active', shares };
  const shareholders = shares.map((s) => ({ address: new PublicKey(s.address), shareBps: s.share_bps }));
  const instructions = action.configured
    ? [await updateSharesInstruction(creator, mint, action.configured, shareholders)]
    : await feeShareInstructions(creator, mint, shareholders, action.pool ?? null);
  const request: HeldRequest = {
    action: 'fee_share',
    agentId,
    wallet,
    sign,
    idempotencyKey: action.idempotencyKey,
    holdKey: `fee_share:${mint.toBase58()}`,
    record: { type: 'RecordAction', agentId, data: { action: 'fee_share', wallet, details } },
    summary: details,
    build: { kind: 'instructions', transaction: { instructions } },
    funds: { lamports: SHARING_RESERVE_LAMPORTS },
  };
  return runHeldAction(services, request, {
    whenHeld(holder: OutboxRow): ActionOutcome {
      if (holder.state === 'unsigned' && !sign) return services.pipeline.handoutOf(holder, wallet);
      if ((holder.state === 'done' || holder.state === 'rejected') && holder.signature) {
        // It landed between the look at the chain and the reservation: that transaction is the answer.
        return services.pipeline.executedOf(holder);
      }
      throw heldBy(holder, mint);
    },
  });
}

/** Where a coin's fee sharing stands after the deploy's second step, and why it is still pending when it is. */
export type FeeSharing = {
  status: 'off' | 'pending' | 'active';
  shares: Share[];
  signature: string | null;
  error?: { code: string; message: string };
} & Partial<Pick<HandedOut, 'transaction' | 'reference'>>;

/**
 * The deploy's second step: opts the new coin into sharing, `active` once confirmed, otherwise `pending` with why
 * (and handed out unsigned when the deploy was), for POST /api/v1/tokens/{mint}/share to finish.
 */
export async function shareFees(
  services: Services,
  agentId: string,
  wallet: string,
  mint: PublicKey,
  shares: Share[],
  sign: boolean,
  idempotencyKey: string | undefined,
): Promise<FeeSharing> {
  let outcome: ActionOutcome;
  try {
    outcome = await runShare(services, { agentId, wallet, mint, shares, sign, idempotencyKey: idempotencyKey === undefined ? undefined : `${idempotencyKey}:fee_share` });
  } catch (error) {
    if (!(error instanceof Rejected)) throw error;
    return { status: 'pending', shares, signature: null, error: { code: error.code, message: error.message } };
  }
  if (!outcome.executed) return { status: 'pending', shares, signature: null, transaction: outcome.transaction, reference: outcome.reference };
  return { status: 'active', shares, signature: outcome.signature };
}

export type ShareInput = RequestOf<typeof tokenParams> & RequestOf<typeof shareBody> & { idempotencyKey?: string };

const sharesOf = (coin: CoinSharing): Share[] => coin.config!.shareholders.map((s) => ({ address: s.address.toBase58(), share_bps: s.shareBps }));

/** Who may opt the coin in: its sharing config's admin once it has one, else the curve's creator or the pool's coin creator. */
function creatorsOf(coin: CoinSharing): PublicKey[] {
  if (coin.config) return [coin.config.admin];
  return [coin.curve!.creator, ...(coin.poolState ? [coin.poolState.coinCreator] : [])];
}

/** A coin's sharing as POST /api/v1/tokens/{mint}/share answers it: as it stood already, or as this request set it up. */
export type ShareReply =
  | { mint: string; status: 'active'; shares: Share[]; already_sharing: true; pool: string | null; signature: string | null }
  | (ActionReply & { mint: string; status: 'active' | 'pending'; already_sharing: false; pool: string | null });

/**
 * POST /api/v1/tokens/{mint}/share: opts a pump coin the caller created (here or elsewhere) into fee sharing,
 * 9,000 bps to the caller and 1,000 to the treasury. Idempotent: a coin that shares already answers its on-chain
 * shares and sends nothing. It finishes a deploy whose sharing step is pending (handing out the same unsigned
 * transaction while that one can still land), and a config created without its shares.
 */
export async function share(services: Services, agentId: string, input: ShareInput): Promise<ShareReply> {
  const trader = await traderOf(services, agentId);
  const mint = parsePublicKey(input.mint, 'mint');
  const coin = await beforeSending(readCoinSharing(services.chain.connection, mint));
  const named = mint.toBase58();
  if (!coin.curve) throw new Rejected('invalid_request', `${named} has no pump bonding curve: only a coin launched on pump can share its creator fee`, { field: 'mint' });
  if (coin.curve.isHolderReward) {
    throw new Rejected('invalid_request', `${named} is a holder_reward coin: its creator fee goes to its holders, and such a coin cannot share it`, { field: 'mint' });
  }
  const creators = creatorsOf(coin);
  if (!creators.some((c) => c.equals(trader.owner))) {
    throw new Rejected('not_creator', `${named} was created by ${creators[0]!.toBase58()}, not by your wallet ${trader.wallet}: only its creator can opt it into fee sharing`, {
      creator: creators[0]!.toBase58(),
    });
  }
  const pool = coin.pool?.toBase58() ?? null;
  if (coin.config?.adminRevoked) {
    const { db, schema } = services.readModel;
    const recorded = await tokens.feeShareOf(db, schema, named);
    return { mint: named, status: 'active', shares: sharesOf(coin), already_sharing: true, pool, signature: recorded?.signature ?? null };
  }
  if (!coin.config && coin.curve.complete && !coin.pool) {
    throw new Rejected('invalid_request', `${named} completed its curve and is waiting for its PumpSwap pool: opt it in once it has migrated`, { field: 'mint' });
  }
  const shares = await defaultShares(services, trader.wallet);
  const outcome = await runShare(services, {
    agentId,
    wallet: trader.wallet,
    mint,
    shares,
    sign: input.execute && trader.custody === 'service',
    idempotencyKey: input.idempotencyKey,
    pool: coin.pool,
    configured: coin.config ? coin.config.shareholders.map((s) => s.address) : undefined,
  });
  return { ...actionReply(outcome), mint: named, status: outcome.executed ? 'active' : 'pending', already_sharing: false, pool };
}
