import type { EmulatedProgram } from '../runtime/program';

/** The programs the local chain emulates natively, at their real program ids. */
export function emulatedPrograms(): EmulatedProgram[] {
  return [];
}
