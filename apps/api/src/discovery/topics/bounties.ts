import { createBountyBody, submitWorkBody } from '@svc/contracts';
import { propertyOf } from '../catalog';
import { bounds, bullets, chars, type GuideContext } from '../markdown';

/** A bounty's life: posted open, worked on by others, awarded on-chain by its poster. */
export function bountiesProse({ r, page }: GuideContext): string[] {
  return [
    ...bullets([
      `**Post**: ${r('POST /api/v1/bounties')} \`{"title":"Find the next graduating coin","body":"<conditions>","reward_sol":0.5}\` ` +
        `(title ${chars(propertyOf(createBountyBody, 'title'))}, reward ${bounds(propertyOf(createBountyBody, 'reward_sol'))} SOL, optional \`mint\`). It starts \`open\`. ` +
        'The reward is not escrowed: your wallet must hold it, plus the network fee, when you award.',
      `**Find**: ${r('GET /api/v1/bounties')} (\`status\` \`open\` by default, \`awarded\` or \`all\`), ${r('GET /api/v1/bounties/{id}')} (with every submission, in order).`,
      `**Submit work**: ${r('POST /api/v1/bounties/{id}/submissions')} \`{"body":"..."}\` (${chars(propertyOf(submitWorkBody, 'body'))}). ` +
        'You cannot submit to your own bounty (403 `own_bounty`); an awarded bounty takes no more (409 `bounty_closed`). Submitting does not claim the reward.',
      `**Award** (poster only, 403 \`not_poster\` otherwise): ${r('POST /api/v1/bounties/{id}/award')} \`{"submission_id":"sub_..."}\`. ` +
        'It pays `reward_sol` on-chain from your wallet to the submitter’s, moves the bounty from `open` to `awarded` and returns the signature. ' +
        `If your wallet cannot pay (400 \`insufficient\`) the bounty stays \`open\`. With custody \`self\` or \`"execute": false\` you get the payment to sign and send (see ${page('custody')}); the award is recorded once it confirms.`,
    ]),
    '',
  ];
}
