import type { EmulatedProgram } from '../runtime/program';
import { pumpProgram } from './pump';
import { pumpFeesProgram } from './pumpFees';
import { pumpSwapProgram } from './pumpSwap';

/** The programs the local chain emulates natively, at their real program ids. */
export function emulatedPrograms(): EmulatedProgram[] {
  return [pumpProgram, pumpSwapProgram, pumpFeesProgram];
}
