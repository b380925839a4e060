import BN from 'bn.js';
import { PublicKey, type Connection, type TransactionInstruction } from '@solana/web3.js';
import { NATIVE_MINT } from '@solana/spl-token';
import {
  GLOBAL_PDA,
  PUMP_FEE_CONFIG_PDA,
  PUMP_PROGRAM_ID,
  PUMP_SDK,
  bondingCurvePda,
  getBuyTokenAmountFromSolAmount,
  holderRewardsPda,
  type Shareholder,
} from '@pump-fun/pump-sdk';
import { asExactIn, curveBuyExactSolInData } from './pump';
import { minOut, priorityInstructions } from './venue';

export interface DeployRequest {
  mint: PublicKey;
  /** The citizen's wallet: pays, signs, and is the coin's creator (unless the creator fee goes to holders). */
  user: PublicKey;
  name: string;
  symbol: string;
  uri: string;
  mayhem: boolean;
  holderReward: boolean;
  devBuyLamports: bigint;
  slippageBps: number;
  priorityLamports: bigint;
}

export interface DeployBuild {
  instructions: TransactionInstruction[];
  bondingCurve: PublicKey;
  /** The creator the curve records: the citizen, or the coin's holder-rewards PDA. */
  creator: PublicKey;
  quotedTokens: bigint;
  minTokens: bigint;
}

/** Compute units a create_v2 with a dev buy is given. */
export const DEPLOY_UNITS = 400_000;

/**
 * `create_v2` for a Token-2022 coin on a fresh bonding curve, and the dev buy in the same transaction as
 * `buy_exact_sol_in` with a floor of the quote less slippage, built by the SDK from Global as the chain holds it.
 */
export async function deployInstructions(connection: Connection, request: DeployRequest): Promise<DeployBuild> {
  const [globalInfo, feeConfigInfo] = await connection.getMultipleAccountsInfo([GLOBAL_PDA, PUMP_FEE_CONFIG_PDA], 'confirmed');
  if (!globalInfo) throw new Error('the pump Global account does not exist on this chain');
  const global = PUMP_SDK.decodeGlobal(globalInfo);
  const feeConfig = feeConfigInfo ? PUMP_SDK.decodeFeeConfig(feeConfigInfo) : null;
  const { mint, user } = request;
  const base = { global, mint, name: request.name, symbol: request.symbol, uri: request.uri, creator: user, user, mayhemMode: request.mayhem, holderReward: request.holderReward };
  const budget = priorityInstructions(request.priorityLamports, DEPLOY_UNITS);
  const bondingCurve = bondingCurvePda(mint);
  const creator = request.holderReward ? holderRewardsPda(mint) : user;
  if (request.devBuyLamports === 0n) {
    return { instructions: [...budget, await PUMP_SDK.createV2Instruction(base)], bondingCurve, creator, quotedTokens: 0n, minTokens: 0n };
  }
  const quoted = BigInt(
    getBuyTokenAmountFromSolAmount({ global, feeConfig, mintSupply: null, bondingCurve: null, amount: new BN(request.devBuyLamports.toString()), quoteMint: NATIVE_MINT }).toString(),
  );
  const floor = minOut(quoted, request.slippageBps);
  const built = await PUMP_SDK.createV2AndBuyInstructions({ ...base, amount: new BN(floor.toString()), solAmount: new BN(request.devBuyLamports.toString()) });
  return {
    instructions: [...budget, ...asExactIn(built, PUMP_PROGRAM_ID, curveBuyExactSolInData(connection, request.devBuyLamports, floor))],
    bondingCurve,
    creator,
    quotedTokens: quoted,
    minTokens: floor,
  };
}

/**
 * Opts a coin into shared creator fees: the sharing config, then its shares, which the program lets the admin
 * set once. Shares must total 10,000 bps.
 */
export async function feeShareInstructions(creator: PublicKey, mint: PublicKey, shares: Shareholder[], pool: PublicKey | null = null): Promise<TransactionInstruction[]> {
  return [
    await PUMP_SDK.createFeeSharingConfig({ creator, mint, pool }),
    await PUMP_SDK.updateFeeShares({ authority: creator, mint, currentShareholders: [creator], newShareholders: shares }),
  ];
}
