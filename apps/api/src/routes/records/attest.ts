import { attestResponse } from '@svc/contracts';
import { HASH_CONSTRUCTION } from '@svc/ledger';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'get',
  path: '/api/v1/attest',
  auth: 'public',
  tag: 'Records',
  summary: 'Head hash, chain length and the result of the integrity check',
  description:
    `${HASH_CONSTRUCTION}. Verification is incremental: the verified prefix is remembered (across restarts) and only new entries are hashed, ` +
    'unless a stored row inside it changed (then it starts again from seq 0). ' +
    'Anyone can repeat the check from /api/v1/changes?after=-1 alone (npm run audit -- --url <base url>).',
  response: attestResponse,
  async handle(_input, { attestor }) {
    const attestation = await attestor.attest();
    return { body: { ...attestation } };
  },
});
