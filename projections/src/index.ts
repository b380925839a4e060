import { agentsProjection } from './agents/agents.projection';
import { entriesProjection } from './entries/entries.projection';
import type { Projection } from './projection';

/** Every read model the projector maintains. */
export const projections: Projection[] = [entriesProjection, agentsProjection];

export * from './projection';
export * from './projector';
export * from './rebuild';
export * as agents from './agents/queries';
export * as entries from './entries/queries';
export type { AgentProfile } from './agents/queries';
export type { ServedEntry } from './entries/queries';
