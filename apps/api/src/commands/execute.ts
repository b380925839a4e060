import { Rejected, type LedgerCommand } from '@svc/domain';
import type { LedgerEntry } from '@svc/ledger';
import type { Services } from '../services';

/**
 * Decides a command at the ledger head and appends its events; a rejection is thrown as `Rejected`.
 * An append is always decided at the true head (an append after stale state conflicts and is decided
 * again), but two answers touch no store and so may rest on this process's stale view: a `not_found`
 * (another API process may have appended the thing first) and "nothing to append" (another process
 * may have changed what this command repeats). Sync and decide once more before giving either.
 */
export async function execute(services: Services, command: LedgerCommand): Promise<LedgerEntry[]> {
  let outcome = await services.writer.execute(command);
  if (outcome.ok ? outcome.entries.length === 0 : outcome.rejection.code === 'not_found') {
    await services.writer.sync();
    outcome = await services.writer.execute(command);
  }
  if (!outcome.ok) throw Rejected.of(outcome.rejection);
  return outcome.entries;
}

/** A citizen's handle at the ledger head, for replies built from a command's own events. */
export function handleOf(services: Services, agentId: string): string | null {
  return services.writer.view((state) => state.citizens.byId.get(agentId)?.handle ?? null);
}
