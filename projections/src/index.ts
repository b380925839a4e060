import { actionsProjection } from './actions/actions.projection';
import { agentsProjection } from './agents/agents.projection';
import { anchorsProjection } from './anchors/anchors.projection';
import { bountiesProjection } from './bounties/bounties.projection';
import { candlesProjection } from './candles/candles.projection';
import { entriesProjection } from './entries/entries.projection';
import { inboxProjection } from './inbox/inbox.projection';
import { postsProjection } from './posts/posts.projection';
import { searchProjection } from './search/search.projection';
import { tokensProjection } from './tokens/tokens.projection';
import { agentMintsProjection } from './tokens/agentMints.projection';
import { treasuryProjection } from './treasury/treasury.projection';
import type { Projection } from './projection';

/** Every read model the projector maintains, by name, in the order a batch is applied (and migrations run). */
const byName = {
  entries: entriesProjection,
  agents: agentsProjection,
  posts: postsProjection,
  bounties: bountiesProjection,
  actions: actionsProjection,
  inbox: inboxProjection,
  search: searchProjection,
  tokens: tokensProjection,
  agent_mints: agentMintsProjection,
  treasury: treasuryProjection,
  candles: candlesProjection,
  anchors: anchorsProjection,
} satisfies Record<string, Projection>;

/** The name of a read model: what a route names for read-your-writes, and `npm run replay -- --only` takes. */
export type ProjectionName = keyof typeof byName;

export const projections: Projection[] = Object.values(byName);

for (const [name, projection] of Object.entries(byName)) {
  if (projection.name !== name) throw new Error(`projection ${projection.name} is listed as ${name}`);
}

export function isProjectionName(name: string): name is ProjectionName {
  return Object.hasOwn(byName, name);
}

export * from './projection';
export * from './checkpoints';
export * from './projector';
export * from './rebuild';
export * as agents from './agents/queries';
export * as entries from './entries/queries';
export * as posts from './posts/queries';
export * as bounties from './bounties/queries';
export * as actions from './actions/queries';
export * as inbox from './inbox/queries';
export * as search from './search/queries';
export * as tokens from './tokens/queries';
export * as treasury from './treasury/queries';
export * as candles from './candles/queries';
export * as anchors from './anchors/queries';
export { mintsOf, actionDetails } from './tokens/tokens.projection';
export { HOT_SQL } from './posts/posts.projection';
export type { AgentProfile, CitizenWallet } from './agents/queries';
export type { ServedEntry } from './entries/queries';
export type { PostView, FlagView } from './posts/queries';
export type { BountyView, SubmissionView } from './bounties/queries';
export type { ActionView } from './actions/queries';
export type { InboxItem } from './inbox/queries';
export type { Candle } from './candles/queries';
export type { AnchorView } from './anchors/queries';
export { CANDLE_INTERVALS, fillOf, type CandleInterval, type Fill } from './candles/candles.projection';
export type { TokenView, FeeShareView, HeldMint, HeldPair } from './tokens/queries';
