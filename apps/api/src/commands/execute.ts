import { Rejected, type LedgerCommand, type LedgerState } from '@svc/domain';
import type { LedgerEntry } from '@svc/ledger';
import { entries } from '@svc/projections';
import type { Services } from '../services';

/** How far the API's clock may be from the database's, whose clock dates an Idempotency-Key. */
const CLOCK_MARGIN_MS = 5 * 60_000;

/**
 * Decides a command at the ledger head and appends its events; a rejection is thrown as `Rejected`.
 * An append is always decided at the true head (an append after stale state conflicts and is decided
 * again), but two answers touch no store and so may rest on this process's stale view: a `not_found`
 * (another API process may have appended the thing first) and "nothing to append" (another process
 * may have changed what this command repeats). Sync and decide once more before giving either.
 */
export async function execute(services: Services, command: LedgerCommand, resumedFrom?: number): Promise<LedgerEntry[]> {
  if (resumedFrom !== undefined) {
    const earlier = await writtenByEarlierAttempt(services, command, resumedFrom);
    if (earlier) return [earlier];
  }
  let outcome = await services.writer.execute(command);
  if (outcome.ok ? outcome.entries.length === 0 : outcome.rejection.code === 'not_found') {
    await services.writer.sync();
    outcome = await services.writer.execute(command);
  }
  if (!outcome.ok) throw Rejected.of(outcome.rejection);
  return outcome.entries;
}

/** A citizen's handle at the ledger head, for replies built from a command's own events. */
export async function handleOf(services: Services, agentId: string): Promise<string | null> {
  return await services.writer.read((state) => state.citizens.byId.get(agentId)?.handle ?? null);
}

/** What a command creates, by the id the request chose for it: how a retry finds out whether it exists. */
function creationOf(command: LedgerCommand): { type: string; field: string; id: string; exists(state: LedgerState): boolean } | undefined {
  switch (command.type) {
    case 'CreatePost': {
      const id = command.data.post_id;
      return { type: 'PostCreated', field: 'post_id', id, exists: (s) => s.posts.byId.get(id)?.author === command.agentId };
    }
    case 'PostBounty': {
      const id = command.data.bounty_id;
      return { type: 'BountyPosted', field: 'bounty_id', id, exists: (s) => s.bounties.byId.get(id)?.poster === command.agentId };
    }
    case 'SubmitWork': {
      const id = command.data.submission_id;
      return { type: 'BountySubmitted', field: 'submission_id', id, exists: (s) => s.bounties.submissions.get(id)?.submitter === command.agentId };
    }
    // Other commands create nothing under a new id: repeating them changes nothing, or is theirs to refuse.
    default:
      return undefined;
  }
}

/**
 * A retry that took an Idempotency-Key over from a process that died proposes the same ids as the attempt
 * it replaces (RouteInput.newId), so the ledger head tells whether that attempt wrote: if it did, its entry
 * answers the retry, and nothing is written twice.
 */
async function writtenByEarlierAttempt(services: Services, command: LedgerCommand, resumedFrom: number): Promise<LedgerEntry | undefined> {
  const creation = creationOf(command);
  if (!creation) return undefined;
  await services.writer.sync();
  if (!(await services.writer.read(creation.exists))) return undefined;
  const head = services.writer.head.seq;
  if (head > services.projection.seq) await services.projection.waitFor(head, services.config.readYourWritesMs);
  const actor = 'agentId' in command ? command.agentId : '';
  const entry = await entries.entryCreating(services.readModel.db, services.readModel.schema, {
    actor,
    type: creation.type,
    since: resumedFrom - CLOCK_MARGIN_MS,
    field: creation.field,
    id: creation.id,
  });
  if (!entry) throw new Rejected('unavailable', `${creation.id} was written by an earlier attempt of this request but cannot be read back yet; retry with the same Idempotency-Key`, {}, 1);
  return entry;
}
