import type { LedgerCommand, LedgerState } from '@svc/domain';
import type { LedgerWriter } from '@svc/ledger';

/** Executes seed commands through the ledger writer, 5,000 at a time (group commits); any refusal ends the bench. */
export async function executeAll(writer: LedgerWriter<LedgerState, LedgerCommand>, commands: LedgerCommand[]): Promise<void> {
  for (let i = 0; i < commands.length; i += 5000) {
    const outcomes = await Promise.all(commands.slice(i, i + 5000).map((c) => writer.execute(c)));
    const refused = outcomes.find((o) => !o.ok);
    if (refused && !refused.ok) throw new Error(`seed refused: ${refused.rejection.code} ${refused.rejection.message}`);
  }
}
