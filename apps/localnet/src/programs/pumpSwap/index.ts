import BN from 'bn.js';
import { PublicKey } from '@solana/web3.js';
import { OFFLINE_PUMP_AMM_PROGRAM } from '@pump-fun/pump-swap-sdk';
import { EmulatedProgram, InstructionContext, anchorError } from '../../runtime/program';
import { createPool } from './createPool';
import { collectCoinCreatorFee, migratePoolCoinCreator, transferCreatorFeesToPump, transferCreatorFeesToPumpV2 } from './creatorFees';
import { pumpSwapGenesis } from './genesis';
import { closeUserVolumeAccumulator, extendAccount, initUserVolumeAccumulator, syncUserVolumeAccumulator } from './maintenance';
import { PUMP_AMM_PROGRAM_ID } from './state';
import { buy, sell } from './swap';

export { seedPool } from './genesis';
export type { SeedPoolParams, SeededPool } from './genesis';

const EMULATED = [
  'createPool',
  'buy',
  'buyExactQuoteIn',
  'sell',
  'collectCoinCreatorFee',
  'extendAccount',
  'initUserVolumeAccumulator',
  'syncUserVolumeAccumulator',
  'closeUserVolumeAccumulator',
  'migratePoolCoinCreator',
  'transferCreatorFeesToPump',
  'transferCreatorFeesToPumpV2',
] as const;
type Emulated = (typeof EMULATED)[number];
const isEmulated = (name: string): name is Emulated => (EMULATED as readonly string[]).includes(name);

/** create_pool grew trailing Option* arguments; callers built before them send shorter data, read as unset. */
const CREATE_POOL_DATA_SIZE = 69;
const CREATE_POOL_DISCRIMINATOR = Buffer.from([233, 146, 209, 142, 207, 104, 64, 188]);

type Args = Record<string, unknown>;
/** The borsh instruction coder anchor builds from the IDL can decode, though its interface only declares encode. */
interface InstructionDecoder {
  decode(data: Buffer): { name: string; data: object } | null;
}
const u64 = (v: unknown) => BigInt((v as BN).toString());
const optionBool = (v: unknown) => (v as { 0: boolean })[0];
const optionU64 = (v: unknown) => u64((v as { 0: BN })[0]);

function decode(data: Buffer): { name: string; args: Args } {
  const padded = data.subarray(0, 8).equals(CREATE_POOL_DISCRIMINATOR) && data.length < CREATE_POOL_DATA_SIZE ? Buffer.concat([data, Buffer.alloc(CREATE_POOL_DATA_SIZE - data.length)]) : data;
  let decoded: { name: string; data: object } | null;
  try {
    decoded = (OFFLINE_PUMP_AMM_PROGRAM.coder.instruction as unknown as InstructionDecoder).decode(padded);
  } catch {
    throw anchorError('InstructionDidNotDeserialize');
  }
  if (!decoded) throw anchorError(data.length < 8 ? 'InstructionDidNotDeserialize' : 'InstructionFallbackNotFound');
  return { name: decoded.name, args: decoded.data as Args };
}

function execute(ctx: InstructionContext): void {
  const { name, args } = decode(ctx.data);
  if (!isEmulated(name)) throw anchorError('InstructionFallbackNotFound', `pump_amm ${name} is not emulated on the localnet`);
  ctx.log(`Instruction: ${name[0]!.toUpperCase()}${name.slice(1)}`);
  switch (name) {
    case 'createPool':
      return createPool(ctx, {
        index: args.index as number,
        baseAmountIn: u64(args.baseAmountIn),
        quoteAmountIn: u64(args.quoteAmountIn),
        coinCreator: args.coinCreator as PublicKey,
        isMayhemMode: args.isMayhemMode as boolean,
        isCashbackCoin: optionBool(args.isCashbackCoin),
        creatorFeeBps: optionU64(args.creatorFeeBps),
        canEditCreatorFee: optionBool(args.canEditCreatorFee),
      });
    case 'buy':
      return buy(ctx, { kind: 'exactBaseOut', baseOut: u64(args.baseAmountOut), maxQuoteIn: u64(args.maxQuoteAmountIn) }, optionBool(args.trackVolume));
    case 'buyExactQuoteIn':
      return buy(ctx, { kind: 'exactQuoteIn', spendableQuoteIn: u64(args.spendableQuoteIn), minBaseOut: u64(args.minBaseAmountOut) }, optionBool(args.trackVolume));
    case 'sell':
      return sell(ctx, u64(args.baseAmountIn), u64(args.minQuoteAmountOut));
    case 'collectCoinCreatorFee':
      return collectCoinCreatorFee(ctx);
    case 'extendAccount':
      return extendAccount(ctx);
    case 'initUserVolumeAccumulator':
      return initUserVolumeAccumulator(ctx);
    case 'syncUserVolumeAccumulator':
      return syncUserVolumeAccumulator(ctx);
    case 'closeUserVolumeAccumulator':
      return closeUserVolumeAccumulator(ctx);
    case 'migratePoolCoinCreator':
      return migratePoolCoinCreator(ctx);
    case 'transferCreatorFeesToPump':
      return transferCreatorFeesToPump(ctx);
    case 'transferCreatorFeesToPumpV2':
      return transferCreatorFeesToPumpV2(ctx);
    default:
      throw new Error(`unhandled pump_amm instruction ${name satisfies never}`);
  }
}

export const pumpSwapProgram: EmulatedProgram = {
  programId: PUMP_AMM_PROGRAM_ID,
  name: 'pump_amm',
  execute,
  genesis: pumpSwapGenesis,
};
