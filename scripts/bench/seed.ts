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

/**
 * `count` posts by `agents` in turn: four in five top-level with two of `tags`, the rest replies to a random
 * one of those (by the citizen `(i * 7 + 3) % agents`), ids `post_<prefix><i>` and `post_<prefix>r<i>`. With
 * 50 posts per citizen, each stays inside the daily caps. Returns the top-level posts too, for votes.
 */
export function threadPosts(
  agents: readonly string[],
  count: number,
  options: { idPrefix: string; body: () => string; tags: readonly string[]; rnd: () => number },
): { top: Array<{ id: string; author: string }>; posts: LedgerCommand[]; replies: LedgerCommand[] } {
  const { idPrefix, body, tags, rnd } = options;
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
  const top: Array<{ id: string; author: string }> = [];
  const topCount = Math.floor(count * 0.8);
  const posts = Array.from({ length: topCount }, (_, i): LedgerCommand => {
    const author = agents[i % agents.length]!;
    const id = `post_${idPrefix}${i}`;
    top.push({ id, author });
    return { type: 'CreatePost', agentId: author, data: { post_id: id, body: body(), mint: null, parent_id: null, tags: [pick(tags), pick(tags)] } };
  });
  const replies = Array.from({ length: count - topCount }, (_, i): LedgerCommand => {
    const author = agents[(i * 7 + 3) % agents.length]!;
    return { type: 'CreatePost', agentId: author, data: { post_id: `post_${idPrefix}r${i}`, body: body(), mint: null, parent_id: pick(top).id, tags: [] } };
  });
  return { top, posts, replies };
}
