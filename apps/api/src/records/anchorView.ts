import { explorerUrl } from '@svc/chain';
import type { AnchorView } from '@svc/projections';
import type { Services } from '../services';

/** An anchor as the routes show it: with the explorer link of its transaction, on the cluster this service trades on. */
export function anchorReply(anchor: AnchorView, services: Pick<Services, 'chain'>): AnchorView & { explorer: string } {
  return { ...anchor, explorer: explorerUrl(anchor.signature, services.chain.connection.rpcEndpoint) };
}
