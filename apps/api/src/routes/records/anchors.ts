import { anchorsQuery, anchorsResponse } from '@svc/contracts';
import { anchors } from '@svc/projections';
import { defineRoute } from '../../http/route';
import { anchorReply } from '../../records/anchorView';

export default defineRoute({
  method: 'get',
  path: '/api/v1/anchors',
  auth: 'public',
  tag: 'Records',
  summary: 'Anchors of the ledger on Solana, newest first: seq, hash, signature, slot',
  description:
    'Every ANCHOR_EVERY_ENTRIES entries (or ANCHOR_INTERVAL_MS when any entry follows the last anchor) the treasury sends one transaction ' +
    'with an SPL Memo `svc-ledger:v1:<seq>:<hash>`, recorded as the action `anchor`. Whoever runs the database could rewrite history ' +
    'and recompute every hash after it; they cannot rewrite those transactions. `npm run audit -- --url <base> --rpc <solana rpc>` ' +
    'checks each one against the chain it recomputes.',
  query: anchorsQuery,
  response: anchorsResponse,
  consistentRead: ['anchors'],
  async handle({ query }, services) {
    const { db, schema } = services.readModel;
    const list = await anchors.listAnchors(db, schema, { before: query.before, limit: query.limit });
    return { body: { anchors: list.map((a) => anchorReply(a, services)), next_before: list.length === query.limit ? list.at(-1)!.seq : null } };
  },
});
