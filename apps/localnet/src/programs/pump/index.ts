import type { EmulatedProgram, InstructionContext } from '../../runtime/program';
import { anchorError } from '../../runtime/program';
import { PUMP_PROGRAM_ID } from './addresses';
import { IDL } from './codec';
import { writePumpGenesis } from './genesis';
import { collectCreatorFee, distributeCreatorFees, distributeCreatorFeesV2, getMinimumDistributableFee, migrateBondingCurveCreator } from './instructions/creatorFees';
import { createV2 } from './instructions/createV2';
import { closeUserVolumeAccumulator, extendAccount, initUserVolumeAccumulator, syncUserVolumeAccumulator } from './instructions/housekeeping';
import { migrate } from './instructions/migrate';
import { buy, buyExactSolIn, sell } from './instructions/trade';

export { PUMP_PROGRAM_ID } from './addresses';

const EMULATED = [
  'create_v2',
  'buy',
  'buy_exact_sol_in',
  'sell',
  'collect_creator_fee',
  'distribute_creator_fees',
  'distribute_creator_fees_v2',
  'get_minimum_distributable_fee',
  'migrate_bonding_curve_creator',
  'migrate',
  'extend_account',
  'init_user_volume_accumulator',
  'sync_user_volume_accumulator',
  'close_user_volume_accumulator',
] as const;
type Emulated = (typeof EMULATED)[number];

const byDiscriminator = new Map(IDL.instructions.map((ix) => [Buffer.from(ix.discriminator).toString('hex'), ix.name]));
const isEmulated = (name: string): name is Emulated => (EMULATED as readonly string[]).includes(name);
const pascal = (snake: string): string => snake.replace(/(^|_)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());

function execute(ctx: InstructionContext): void {
  if (ctx.data.length < 8) throw anchorError('InstructionFallbackNotFound');
  const name = byDiscriminator.get(ctx.data.subarray(0, 8).toString('hex'));
  if (!name) throw anchorError('InstructionFallbackNotFound');
  if (!isEmulated(name)) throw anchorError('InstructionFallbackNotFound', `pump ${name} is not emulated on the localnet`);
  ctx.log(`Instruction: ${pascal(name)}`);
  switch (name) {
    case 'create_v2':
      return createV2(ctx);
    case 'buy':
      return buy(ctx);
    case 'buy_exact_sol_in':
      return buyExactSolIn(ctx);
    case 'sell':
      return sell(ctx);
    case 'collect_creator_fee':
      return collectCreatorFee(ctx);
    case 'distribute_creator_fees':
      return distributeCreatorFees(ctx);
    case 'distribute_creator_fees_v2':
      return distributeCreatorFeesV2(ctx);
    case 'get_minimum_distributable_fee':
      return getMinimumDistributableFee(ctx);
    case 'migrate_bonding_curve_creator':
      return migrateBondingCurveCreator(ctx);
    case 'migrate':
      return migrate(ctx);
    case 'extend_account':
      return extendAccount(ctx);
    case 'init_user_volume_accumulator':
      return initUserVolumeAccumulator(ctx);
    case 'sync_user_volume_accumulator':
      return syncUserVolumeAccumulator(ctx);
    case 'close_user_volume_accumulator':
      return closeUserVolumeAccumulator(ctx);
    default: {
      const unhandled: never = name;
      throw new Error(`unhandled pump instruction ${String(unhandled)}`);
    }
  }
}

/** The pump bonding-curve program, emulated at its mainnet id. */
export const pumpProgram: EmulatedProgram = {
  programId: PUMP_PROGRAM_ID,
  name: 'pump',
  execute,
  genesis: writePumpGenesis,
};
