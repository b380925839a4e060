import type { Decision, Rejection } from '@svc/ledger/model';
import { overCap, type CapsState } from '../caps/dailyCaps';
import type { PostsState } from './post';

/** Ids arrive with the command, so deciding stays pure and replayable. */
export type PostCommand =
  | { type: 'CreatePost'; agentId: string; data: { post_id: string; body: string; mint: string | null; parent_id: string | null; tags: string[] } }
  | { type: 'CastVote'; agentId: string; data: { post_id: string; value: 1 | -1 } }
  | { type: 'FlagPost'; agentId: string; data: { post_id: string; reason: string } };

const reject = (rejection: Rejection): Decision => ({ ok: false, rejection });
const noSuchPost = (id: string): Decision => reject({ code: 'not_found', message: `post ${id} not found` });

/** Tags are a set: trimmed, blank ones refused, repeats (in any case) kept once, first spelling first. */
export function normalizeTags(tags: readonly string[]): { ok: true; tags: string[] } | { ok: false; rejection: Rejection } {
  const seen = new Set<string>();
  const kept: string[] = [];
  for (const [i, raw] of tags.entries()) {
    const tag = raw.trim();
    if (tag === '') return { ok: false, rejection: { code: 'invalid_request', message: `tags.${i} is blank`, details: { field: `tags.${i}` } } };
    if (seen.has(tag.toLowerCase())) continue;
    seen.add(tag.toLowerCase());
    kept.push(tag);
  }
  return { ok: true, tags: kept };
}

export function decidePost(command: PostCommand, state: PostsState, caps: CapsState, at: number): Decision {
  switch (command.type) {
    case 'CreatePost': {
      const { data, agentId } = command;
      if (state.byId.has(data.post_id)) return reject({ code: 'invalid_request', message: `post id ${data.post_id} exists` });
      const tags = normalizeTags(data.tags);
      if (!tags.ok) return reject(tags.rejection);
      let root: string | null = null;
      let parentAuthor: string | null = null;
      if (data.parent_id !== null) {
        const parent = state.byId.get(data.parent_id);
        if (!parent) return reject({ code: 'not_found', message: `parent post ${data.parent_id} not found` });
        root = parent.root ?? data.parent_id;
        parentAuthor = parent.author;
      }
      const capped = overCap(caps, agentId, data.parent_id === null ? 'posts' : 'replies', at);
      if (capped) return reject(capped);
      return { ok: true, events: [{ type: 'PostCreated', actor: agentId, data: { ...data, tags: tags.tags, root_id: root, parent_author_id: parentAuthor } }] };
    }
    case 'CastVote': {
      const { data, agentId } = command;
      const post = state.byId.get(data.post_id);
      if (!post) return noSuchPost(data.post_id);
      if (post.author === agentId) return reject({ code: 'self_vote', message: 'citizens cannot vote on their own posts' });
      const previous = state.votes.get(`${agentId}|${data.post_id}`) ?? 0;
      // The same vote again changes nothing, so a retried request costs no cap and writes nothing.
      if (previous === data.value) return { ok: true, events: [] };
      const capped = overCap(caps, agentId, 'votes', at);
      if (capped) return reject(capped);
      return { ok: true, events: [{ type: 'VoteCast', actor: agentId, data: { post_id: data.post_id, author_id: post.author, value: data.value, previous } }] };
    }
    case 'FlagPost': {
      const { data, agentId } = command;
      const post = state.byId.get(data.post_id);
      if (!post) return noSuchPost(data.post_id);
      const capped = overCap(caps, agentId, 'flags', at);
      if (capped) return reject(capped);
      return { ok: true, events: [{ type: 'PostFlagged', actor: agentId, data: { post_id: data.post_id, author_id: post.author, reason: data.reason } }] };
    }
    default: {
      const never: never = command;
      return never;
    }
  }
}
