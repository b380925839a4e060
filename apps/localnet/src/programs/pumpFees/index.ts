import { getPumpFeeProgram } from '@pump-fun/pump-sdk';
import { EmulatedProgram, InstructionContext, anchorError } from '../../runtime/program';
import { createFeeSharingConfig, updateFeeShares } from './feeSharing';
import { pumpFeesGenesis } from './genesis';
import { PUMP_FEES_PROGRAM_ID, Shareholder } from './state';

export { decodeSharingConfig, encodeFeeConfig, decodeFeeConfig, sharingConfigPda, feeConfigPda } from './state';
export type { SharingConfig, Shareholder, FeeConfig } from './state';

const EMULATED = ['createFeeSharingConfig', 'updateFeeShares', 'updateFeeSharesV2'] as const;
type Emulated = (typeof EMULATED)[number];
const isEmulated = (name: string): name is Emulated => (EMULATED as readonly string[]).includes(name);

/** The borsh instruction coder anchor builds from the IDL can decode, though its interface only declares encode. */
interface InstructionDecoder {
  decode(data: Buffer): { name: string; data: object } | null;
}
const decoder = getPumpFeeProgram(null as never).coder.instruction as unknown as InstructionDecoder;

function execute(ctx: InstructionContext): void {
  let decoded: { name: string; data: object } | null;
  try {
    decoded = decoder.decode(ctx.data);
  } catch {
    throw anchorError('InstructionDidNotDeserialize');
  }
  if (!decoded) throw anchorError(ctx.data.length < 8 ? 'InstructionDidNotDeserialize' : 'InstructionFallbackNotFound');
  const { name } = decoded;
  if (!isEmulated(name)) throw anchorError('InstructionFallbackNotFound', `pump_fees ${name} is not emulated on the localnet`);
  ctx.log(`Instruction: ${name[0]!.toUpperCase()}${name.slice(1)}`);
  const args = decoded.data as { shareholders?: Shareholder[] };
  switch (name) {
    case 'createFeeSharingConfig':
      return createFeeSharingConfig(ctx);
    case 'updateFeeShares':
      return updateFeeShares(ctx, args.shareholders ?? [], 1);
    case 'updateFeeSharesV2':
      return updateFeeShares(ctx, args.shareholders ?? [], 2);
    default:
      throw new Error(`unhandled pump_fees instruction ${name satisfies never}`);
  }
}

export const pumpFeesProgram: EmulatedProgram = {
  programId: PUMP_FEES_PROGRAM_ID,
  name: 'pump_fees',
  execute,
  genesis: pumpFeesGenesis,
};
