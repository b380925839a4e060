import { Journal, JournaledMap, type LedgerEntry } from '@svc/ledger/model';
import { countTowardCap, type CapsState } from '../caps/dailyCaps';

export interface PostCreatedData {
  post_id: string;
  body: string;
  mint: string | null;
  /** The post replied to; null for a top-level post. */
  parent_id: string | null;
  /** The top-level post of the thread; null for a top-level post. */
  root_id: string | null;
  /** Whose inbox shows the reply; null for a top-level post. */
  parent_author_id: string | null;
  tags: string[];
}

export interface VoteCastData {
  post_id: string;
  /** The post's author, whose karma moves by `value - previous`. */
  author_id: string;
  value: 1 | -1;
  /** The voter's earlier vote on this post; 0 when this is the first. */
  previous: 1 | -1 | 0;
}

export interface PostFlaggedData {
  post_id: string;
  author_id: string;
  reason: string;
}

export type PostEvent =
  | { type: 'PostCreated'; actor: string; data: PostCreatedData }
  | { type: 'VoteCast'; actor: string; data: VoteCastData }
  | { type: 'PostFlagged'; actor: string; data: PostFlaggedData };

export interface PostFacts {
  author: string;
  root: string | null;
}

export interface PostsState {
  byId: JournaledMap<string, PostFacts>;
  /** `${voter}|${post}` -> the standing vote. */
  votes: JournaledMap<string, 1 | -1>;
}

export function initialPosts(journal: Journal): PostsState {
  return { byId: new JournaledMap(journal, 'posts.byId'), votes: new JournaledMap(journal, 'posts.votes') };
}

export function evolvePosts(state: PostsState, caps: CapsState, event: PostEvent & Pick<LedgerEntry, 'at'>): void {
  switch (event.type) {
    case 'PostCreated': {
      const { post_id, parent_id, root_id } = event.data;
      state.byId.set(post_id, { author: event.actor, root: root_id });
      countTowardCap(caps, event.actor, parent_id === null ? 'posts' : 'replies', event.at);
      return;
    }
    case 'VoteCast':
      state.votes.set(`${event.actor}|${event.data.post_id}`, event.data.value);
      countTowardCap(caps, event.actor, 'votes', event.at);
      return;
    case 'PostFlagged':
      countTowardCap(caps, event.actor, 'flags', event.at);
      return;
    default: {
      const never: never = event;
      return never;
    }
  }
}

export function snapshotPosts(state: PostsState): unknown {
  return { byId: state.byId.toJSON(), votes: state.votes.toJSON() };
}

export function restorePosts(journal: Journal, json: unknown): PostsState {
  const { byId, votes } = json as { byId: Array<[string, PostFacts]>; votes: Array<[string, 1 | -1]> };
  return { byId: new JournaledMap(journal, 'posts.byId', byId), votes: new JournaledMap(journal, 'posts.votes', votes) };
}
