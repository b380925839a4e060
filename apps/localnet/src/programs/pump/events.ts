import { PublicKey } from '@solana/web3.js';
import type { InstructionContext } from '../../runtime/program';
import { encodeEvent } from './codec';
import type { Shareholder } from './state';

/** Anchor's `emit!`: the event's discriminator and borsh body as a `Program data:` log line. */
export function emitEvent(ctx: InstructionContext, name: string, fields: object): void {
  ctx.emitData(encodeEvent(name, fields));
}

export interface TradeEvent {
  mint: PublicKey;
  solAmount: bigint;
  tokenAmount: bigint;
  isBuy: boolean;
  user: PublicKey;
  timestamp: bigint;
  virtualSolReserves: bigint;
  virtualTokenReserves: bigint;
  realSolReserves: bigint;
  realTokenReserves: bigint;
  feeRecipient: PublicKey;
  feeBasisPoints: bigint;
  fee: bigint;
  creator: PublicKey;
  creatorFeeBasisPoints: bigint;
  creatorFee: bigint;
  trackVolume: boolean;
  totalUnclaimedTokens: bigint;
  totalClaimedTokens: bigint;
  currentSolVolume: bigint;
  lastUpdateTimestamp: bigint;
  ixName: string;
  mayhemMode: boolean;
  cashbackFeeBasisPoints: bigint;
  cashback: bigint;
  buybackFeeBasisPoints: bigint;
  buybackFee: bigint;
  shareholders: Shareholder[];
  quoteMint: PublicKey;
  quoteAmount: bigint;
  virtualQuoteReserves: bigint;
  realQuoteReserves: bigint;
  holderRewardsBps: bigint;
  holderRewards: bigint;
}
