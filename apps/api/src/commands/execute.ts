import type { LedgerCommand } from '@svc/domain';
import type { LedgerEntry } from '@svc/ledger';
import { fromRejection } from '../http/errors';
import type { Services } from '../services';

/**
 * Decides a command at the ledger head and appends its events; a rejection becomes the error reply.
 * An acceptance is always decided at the true head (an append after stale state conflicts and is
 * decided again), but a `not_found` may only mean another API process appended the thing first: sync
 * and decide once more before saying so.
 */
export async function execute(services: Services, command: LedgerCommand): Promise<LedgerEntry[]> {
  let outcome = await services.writer.execute(command);
  if (!outcome.ok && outcome.rejection.code === 'not_found') {
    await services.writer.sync();
    outcome = await services.writer.execute(command);
  }
  if (!outcome.ok) throw fromRejection(outcome.rejection);
  return outcome.entries;
}

/** A citizen's handle at the ledger head, for replies built from a command's own events. */
export function handleOf(services: Services, agentId: string): string | null {
  return services.writer.view((state) => state.citizens.byId.get(agentId)?.handle ?? null);
}
