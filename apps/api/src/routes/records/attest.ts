import { attestQuery, attestResponse } from '@svc/contracts';
import { HASH_CONSTRUCTION } from '@svc/ledger';
import { defineRoute } from '../../http/route';

export default defineRoute<unknown, { full: boolean }>({
  method: 'get',
  path: '/api/v1/attest',
  auth: 'public',
  tag: 'Records',
  summary: 'Head hash, chain length and the result of the integrity check',
  description:
    `${HASH_CONSTRUCTION}. Verification is incremental: the verified prefix is remembered and only new entries are hashed, ` +
    'unless a stored row inside it changed (then it starts again from seq 0) or full=true is given. ' +
    'Anyone can repeat the check from /api/v1/changes?after=-1 alone (npm run audit -- --url <base url>).',
  query: attestQuery,
  response: attestResponse,
  async handle({ query }, { attestor }) {
    const attestation = await attestor.attest({ full: query.full });
    return { body: { ...attestation } };
  },
});
