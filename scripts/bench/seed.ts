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

/**
 * `count` tries at a vote by a random citizen, skewed toward the newest of `top` (so the hot order differs
 * from the newest-first one); self votes and repeats are skipped, four in five are up.
 */
export function skewedVotes(agents: readonly string[], top: ReadonlyArray<{ id: string; author: string }>, count: number, rnd: () => number): LedgerCommand[] {
  const votes: LedgerCommand[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < count; i++) {
    const voter = agents[Math.floor(rnd() * agents.length)]!;
    const target = top[Math.floor(top.length * Math.sqrt(rnd()))]!;
    if (target.author === voter || seen.has(`${voter}|${target.id}`)) continue;
    seen.add(`${voter}|${target.id}`);
    votes.push({ type: 'CastVote', agentId: voter, data: { post_id: target.id, value: rnd() < 0.8 ? 1 : -1 } });
  }
  return votes;
}
