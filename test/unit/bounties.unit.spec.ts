import { DAILY_CAPS } from '@svc/domain';
import { GivenLedger } from '../support/ledgerModel';

const NOON = Date.UTC(2026, 10, 22, 12, 0, 0);

function setup() {
  const given = new GivenLedger(NOON);
  const [poster, worker, other] = [given.citizen(1), given.citizen(2), given.citizen(3)];
  given.accept({ type: 'PostBounty', agentId: poster, data: { bounty_id: 'bounty_1', title: 'find alpha', body: 'conditions', reward_sol: 0.5, mint: null } });
  given.accept({ type: 'SubmitWork', agentId: worker, data: { bounty_id: 'bounty_1', submission_id: 'sub_1', body: 'work' } });
  return { given, poster, worker, other };
}

describe('bounties', () => {
  it('a posted bounty starts open and counts toward the 10-a-day cap', () => {
    const given = new GivenLedger(NOON);
    const poster = given.citizen(1);
    for (let i = 0; i < DAILY_CAPS.bounties; i++) {
      given.accept({ type: 'PostBounty', agentId: poster, data: { bounty_id: `bounty_${i}`, title: 'ttt', body: 'b', reward_sol: 1, mint: null } });
    }
    expect(given.state.bounties.byId.get('bounty_0')?.status).toBe('open');
    expect(given.decide({ type: 'PostBounty', agentId: poster, data: { bounty_id: 'bounty_x', title: 'ttt', body: 'b', reward_sol: 1, mint: null } })).toMatchObject({
      ok: false,
      rejection: { code: 'daily_cap', details: { used: 10, cap: 10 } },
    });
  });

  it('a submission names the poster for their inbox; the poster cannot submit (own_bounty)', () => {
    const { given, poster, other } = setup();
    expect(given.decide({ type: 'SubmitWork', agentId: other, data: { bounty_id: 'bounty_1', submission_id: 'sub_2', body: 'w' } })).toMatchObject({
      ok: true,
      events: [{ type: 'BountySubmitted', data: { poster_id: poster } }],
    });
    expect(given.decide({ type: 'SubmitWork', agentId: poster, data: { bounty_id: 'bounty_1', submission_id: 'sub_3', body: 'w' } })).toMatchObject({
      ok: false,
      rejection: { code: 'own_bounty' },
    });
    expect(given.decide({ type: 'SubmitWork', agentId: other, data: { bounty_id: 'bounty_9', submission_id: 'sub_4', body: 'w' } })).toMatchObject({
      ok: false,
      rejection: { code: 'not_found' },
    });
  });

  it('an award records the payment action and closes the bounty', () => {
    const { given, poster, worker } = setup();
    const decision = given.decide({ type: 'AwardBounty', agentId: poster, data: { bounty_id: 'bounty_1', submission_id: 'sub_1', signature: 'SIG1' } });
    expect(decision).toEqual({
      ok: true,
      events: [
        { type: 'ActionRecorded', actor: poster, data: { action: 'award_payment', signature: 'SIG1', wallet: 'W1', details: { to: 'W2', to_agent_id: worker, amount_sol: 0.5, bounty_id: 'bounty_1' } } },
        { type: 'BountyAwarded', actor: poster, data: { bounty_id: 'bounty_1', submission_id: 'sub_1', winner_id: worker, reward_sol: 0.5, signature: 'SIG1' } },
      ],
    });
  });

  it('only the poster may award (not_poster); an unknown submission is not_found; an awarded bounty is closed', () => {
    const { given, poster, other } = setup();
    const award = (agentId: string, submission: string, signature: string) =>
      given.decide({ type: 'AwardBounty', agentId, data: { bounty_id: 'bounty_1', submission_id: submission, signature } });
    expect(award(other, 'sub_1', 'S')).toMatchObject({ ok: false, rejection: { code: 'not_poster' } });
    expect(award(poster, 'sub_404', 'S')).toMatchObject({ ok: false, rejection: { code: 'not_found' } });
    given.accept({ type: 'AwardBounty', agentId: poster, data: { bounty_id: 'bounty_1', submission_id: 'sub_1', signature: 'SIG1' } });
    expect(award(poster, 'sub_1', 'SIG2')).toMatchObject({ ok: false, rejection: { code: 'bounty_closed' } });
    expect(given.decide({ type: 'SubmitWork', agentId: other, data: { bounty_id: 'bounty_1', submission_id: 'sub_5', body: 'late' } })).toMatchObject({
      ok: false,
      rejection: { code: 'bounty_closed' },
    });
  });

  it('recording the same paid award again is a no-op, not a second payment record', () => {
    const { given, poster } = setup();
    const award = { type: 'AwardBounty' as const, agentId: poster, data: { bounty_id: 'bounty_1', submission_id: 'sub_1', signature: 'SIG1' } };
    given.accept(award);
    expect(given.decide(award)).toEqual({ ok: true, events: [] });
  });

  it('a reward is whole lamports: float noise is read as the lamport it means, a tenth of a lamport is refused', () => {
    const given = new GivenLedger(NOON);
    const poster = given.citizen(1);
    const post = (bounty_id: string, reward_sol: number) => given.decide({ type: 'PostBounty', agentId: poster, data: { bounty_id, title: 'ttt', body: 'b', reward_sol, mint: null } });
    expect(post('bounty_a', 0.1 + 0.2)).toMatchObject({ ok: true, events: [{ data: { reward_sol: 0.3 } }] });
    expect(post('bounty_b', 999.999999999)).toMatchObject({ ok: true, events: [{ data: { reward_sol: 999.999999999 } }] });
    expect(post('bounty_c', 0.0010000001)).toEqual({
      ok: false,
      rejection: { code: 'invalid_request', message: expect.stringMatching(/more than 9 decimals/), details: { field: 'reward_sol' } },
    });
  });

  it('refuses to record a payment signature the ledger already holds for another award', () => {
    const { given, poster, worker } = setup();
    given.accept({ type: 'AwardBounty', agentId: poster, data: { bounty_id: 'bounty_1', submission_id: 'sub_1', signature: 'SIG1' } });
    given.accept({ type: 'PostBounty', agentId: poster, data: { bounty_id: 'bounty_2', title: 'ttt', body: 'b', reward_sol: 1, mint: null } });
    given.accept({ type: 'SubmitWork', agentId: worker, data: { bounty_id: 'bounty_2', submission_id: 'sub_2', body: 'w' } });
    expect(given.decide({ type: 'AwardBounty', agentId: poster, data: { bounty_id: 'bounty_2', submission_id: 'sub_2', signature: 'SIG1' } })).toMatchObject({
      ok: false,
      rejection: { code: 'invalid_request', message: expect.stringMatching(/SIG1 is already recorded/) },
    });
  });

  it('a submission on another bounty is not_found for this one', () => {
    const { given, poster, worker } = setup();
    given.accept({ type: 'PostBounty', agentId: poster, data: { bounty_id: 'bounty_2', title: 'ttt', body: 'b', reward_sol: 1, mint: null } });
    given.accept({ type: 'SubmitWork', agentId: worker, data: { bounty_id: 'bounty_2', submission_id: 'sub_b2', body: 'w' } });
    expect(given.decide({ type: 'AwardBounty', agentId: poster, data: { bounty_id: 'bounty_1', submission_id: 'sub_b2', signature: 'S' } })).toMatchObject({
      ok: false,
      rejection: { code: 'not_found' },
    });
  });
});
