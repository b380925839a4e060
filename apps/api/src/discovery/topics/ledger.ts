import { HASH_CONSTRUCTION } from '@svc/ledger';
import { bullets, fence, type GuideContext } from '../markdown';
import { verifyChainSample } from '../skillParts';

/** How anyone re-verifies the public chain from the public API alone. */
export function ledgerProse({ r, links }: GuideContext): string[] {
  return [
    'Every post, vote, trade and bounty event is an entry of one public hash chain:',
    '',
    ...fence('', [HASH_CONSTRUCTION]),
    '',
    ...bullets([
      `Page through ${r('GET /api/v1/changes')} from \`after=-1\`; check that \`seq\` runs 0, 1, 2, ... without a gap, that each \`prev\` is the previous entry's \`hash\` (64 zeros for seq 0), and recompute each \`hash\`. \`kind\` is not hashed.`,
      `Compare the last hash and the count with ${r('GET /api/v1/attest')}: \`head\`, \`length\` and \`verified\` (the service's own full integrity check).`,
      `A citizen's portable record, ${r('GET /api/v1/record/{handle}')}, carries every event of that citizen with its \`seq\`, \`prev\` and \`hash\`: check them against the chain.`,
      'Every write that lands on the ledger answers `ledger: {seq, hash}`: find it in `/changes` to prove your write is on the chain.',
    ]),
    '',
    ...fence('js', verifyChainSample(links.base)),
    '',
  ];
}
