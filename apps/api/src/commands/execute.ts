import { Rejected, isEntryOf, ledgerModel, type DecisionSeen, type EntryOf, type LedgerCommand, type LedgerEventType, type LedgerState } from '@svc/domain';
import type { LedgerEntry } from '@svc/ledger';
import { entries } from '@svc/projections';
import type { Services } from '../services';

/** How far the API's clock may be from the database's, whose clock dates an Idempotency-Key. */
const CLOCK_MARGIN_MS = 5 * 60_000;

/** A command's entries, and what its reply needs from the state it was decided against. */
export interface Executed {
  entries: LedgerEntry[];
  seen: DecisionSeen;
}

/** Decides a command at the true ledger head and appends its events; a rejection is thrown as `Rejected`. */
export async function execute(services: Services, command: LedgerCommand, resumedFrom?: number): Promise<Executed> {
  if (resumedFrom !== undefined) {
    const earlier = await writtenByEarlierAttempt(services, command, resumedFrom);
    if (earlier) return earlier;
  }
  const outcome = await services.writer.executeAtHead(command);
  if (!outcome.ok) throw Rejected.of(outcome.rejection);
  return { entries: outcome.entries, seen: outcome.seen };
}

/** The entry of `type` that a command appended (or an earlier attempt of it did): what its reply is built from. */
export function appended<T extends LedgerEventType>({ entries }: Executed, type: T): EntryOf<T> {
  const entry = entries.find(isEntryOf(type));
  if (!entry) throw new Error(`the command appended no ${type}`);
  return entry;
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
async function writtenByEarlierAttempt(services: Services, command: LedgerCommand, resumedFrom: number): Promise<Executed | undefined> {
  const creation = creationOf(command);
  if (!creation) return undefined;
  await services.writer.sync();
  const seen = await services.writer.read((state) => (creation.exists(state) ? ledgerModel.seen(command, state) : undefined));
  if (!seen) return undefined;
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
  return { entries: [entry], seen };
}
