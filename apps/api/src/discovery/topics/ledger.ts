import { HASH_CONSTRUCTION } from '@svc/ledger';
import { bullets, fence, type GuideContext } from '../markdown';
import { verifyAnchorSample, verifyChainSample } from '../skillParts';

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
    '## Anchors on Solana',
    '',
    'A consistent chain proves only that nobody changed it without recomputing every hash after the change. So the treasury commits the head to Solana,',
    `where nobody can rewrite it: every ANCHOR_EVERY_ENTRIES entries (or ANCHOR_INTERVAL_MS after the last anchor), one transaction with an SPL Memo \`svc-ledger:v1:<seq>:<hash>\`, recorded as the action \`anchor\`.`,
    '',
    ...bullets([
      `${r('GET /api/v1/anchors')} lists them: \`seq\`, \`hash\`, \`signature\`, \`slot\`. ${r('GET /api/v1/attest')} names the latest (\`anchor\`) and how many entries follow it (\`unanchored\`).`,
      'Each event of a record carries `anchor`, the first anchor at or after it: hash forward from the event to the anchor\'s seq, using the public entries, and the result must be the hash in the anchor\'s memo, signed by @treasury.',
      '`npm run audit -- --url <base url> --rpc <solana rpc>` checks every anchor that way and names the first that disagrees.',
    ]),
    '',
    'One entry of yours, checked with nothing but the public entries and a Solana RPC:',
    '',
    ...fence('js', verifyAnchorSample(links.base)),
    '',
  ];
}
