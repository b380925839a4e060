import { NO_POLICY, policyInForce, type LedgerCommand, type Policy, type SpendRequest } from '@svc/domain';
import { GivenLedger } from '../support/ledgerModel';

const NOON = Date.UTC(2026, 10, 22, 12, 0, 0);
const NEXT_DAY = Date.UTC(2026, 10, 23, 0, 0, 1);
const DELAY = 86_400_000;
const SOL = 1e9;

const setPolicy = (agentId: string, policy: Partial<Policy>, now = NOON): LedgerCommand => ({
  type: 'SetPolicy',
  agentId,
  data: { policy: { ...NO_POLICY, ...policy }, now, delay_ms: DELAY },
});

const spend = (agentId: string, reservation: string, sol: number, more: Partial<SpendRequest> = {}): LedgerCommand => ({
  type: 'ReserveSpend',
  agentId,
  data: { reservation, action: 'buy', lamports: sol * SOL, fee_lamports: 0, mint: 'MINT', recipient: null, reserve: true, now: NOON, until: NOON + 120_000, ...more },
});

describe('spending policy', () => {
  it('a first policy tightens "no rule", so it applies at once', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    const [entry] = given.accept(setPolicy(alice, { max_sol_per_day: 1 }));
    expect(entry).toMatchObject({ type: 'PolicySet', data: { policy: { ...NO_POLICY, max_sol_per_day: 1 }, pending: null } });
  });

  it('a loosening waits for the delay; a tightening in the same change applies at once', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    given.accept(setPolicy(alice, { max_sol_per_day: 1, max_sol_per_trade: 0.5 }));
    const [entry] = given.accept(setPolicy(alice, { max_sol_per_day: 5, max_sol_per_trade: 0.1 }));
    expect(entry!.data).toEqual({
      policy: { ...NO_POLICY, max_sol_per_day: 1, max_sol_per_trade: 0.1 },
      pending: { policy: { ...NO_POLICY, max_sol_per_day: 5, max_sol_per_trade: 0.1 }, effective_at: NOON + DELAY },
    });
    expect(policyInForce(given.state.policies, alice, NOON + DELAY - 1).policy.max_sol_per_day).toBe(1);
    expect(policyInForce(given.state.policies, alice, NOON + DELAY)).toEqual({ policy: { ...NO_POLICY, max_sol_per_day: 5, max_sol_per_trade: 0.1 }, pending: null });
  });

  it('dropping a rule or widening an allowed list is a loosening', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    given.accept(setPolicy(alice, { allowed_mints: ['A'] }));
    expect(given.decide(setPolicy(alice, { allowed_mints: ['A', 'B'] }))).toMatchObject({ ok: true, events: [{ data: { policy: { allowed_mints: ['A'] }, pending: { policy: { allowed_mints: ['A', 'B'] } } } }] });
    expect(given.decide(setPolicy(alice, {}))).toMatchObject({ ok: true, events: [{ data: { policy: { allowed_mints: ['A'] }, pending: { policy: NO_POLICY } } }] });
    expect(given.decide(setPolicy(alice, { allowed_mints: [] }))).toMatchObject({ ok: true, events: [{ data: { policy: { allowed_mints: [] }, pending: null } }] });
  });

  it('a pending change is cancelled; with none pending, cancelling is refused', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    given.accept(setPolicy(alice, { max_sol_per_day: 1 }));
    given.accept(setPolicy(alice, { max_sol_per_day: 2 }));
    const [entry] = given.accept({ type: 'CancelPolicyChange', agentId: alice, data: { now: NOON } });
    expect(entry).toMatchObject({ type: 'PolicyChangeCancelled', data: { effective_at: NOON + DELAY } });
    expect(policyInForce(given.state.policies, alice, NOON + DELAY)).toEqual({ policy: { ...NO_POLICY, max_sol_per_day: 1 }, pending: null });
    expect(given.decide({ type: 'CancelPolicyChange', agentId: alice, data: { now: NOON } })).toMatchObject({ ok: false, rejection: { code: 'invalid_request', details: { field: 'cancel_pending' } } });
  });

  it('without a policy nothing is reserved', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    expect(given.decide(spend(alice, 'r1', 50))).toEqual({ ok: true, events: [] });
  });

  it('reserves against the day cap until it is full, counting fees, and names the day', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    given.accept(setPolicy(alice, { max_sol_per_day: 1 }));
    for (let i = 0; i < 10; i++) given.accept(spend(alice, `r${i}`, 0.1));
    expect(given.decide(spend(alice, 'r10', 0.1))).toEqual({
      ok: false,
      rejection: expect.objectContaining({ code: 'policy_limit', details: { limit: 'max_sol_per_day', used: 1, cap: 1, day: '2026-11-22' } }),
    });
    const withFee = new GivenLedger(NOON);
    const bob = withFee.citizen(2);
    withFee.accept(setPolicy(bob, { max_sol_per_day: 1 }));
    for (let i = 0; i < 9; i++) withFee.accept(spend(bob, `r${i}`, 0.1, { fee_lamports: 5000 }));
    expect(withFee.decide(spend(bob, 'r9', 0.1, { fee_lamports: 5000 }))).toMatchObject({ ok: false, rejection: { details: { limit: 'max_sol_per_day' } } });
  });

  it('a released reservation frees its amount; a recorded one stays spent; an expired one counts no more', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    given.accept(setPolicy(alice, { max_sol_per_day: 0.2 }));
    given.accept(spend(alice, 'r1', 0.1));
    given.accept(spend(alice, 'r2', 0.1));
    expect(given.decide(spend(alice, 'r3', 0.1))).toMatchObject({ ok: false });
    expect(given.accept({ type: 'ReleaseSpend', agentId: alice, data: { reservation: 'r1' } })).toMatchObject([{ type: 'SpendReleased' }]);
    expect(given.decide({ type: 'ReleaseSpend', agentId: alice, data: { reservation: 'r1' } })).toEqual({ ok: true, events: [] });
    const [recorded] = given.accept({ type: 'RecordAction', agentId: alice, reservation: 'r2', data: { action: 'buy', signature: 'sig', wallet: 'W1', details: {} } });
    expect(recorded!.data).toMatchObject({ reservation: 'r2' });
    given.accept(spend(alice, 'r3', 0.1));
    expect(given.decide(spend(alice, 'r4', 0.1))).toMatchObject({ ok: false, rejection: { details: { used: 0.2 } } });
    expect(given.decide(spend(alice, 'r4', 0.1, { now: NOON + 120_000 }))).toMatchObject({ ok: true });
    expect(given.decide(spend(alice, 'r4', 0.2, { now: NEXT_DAY, until: NEXT_DAY + 1 }))).toMatchObject({ ok: true, events: [{ data: { day: '2026-11-23' } }] });
  });

  it('a record with no reservation of its own is unchanged', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    const [recorded] = given.accept({ type: 'RecordAction', agentId: alice, reservation: 'act_x', data: { action: 'buy', signature: 'sig', wallet: 'W1', details: {} } });
    expect(recorded!.data).toEqual({ action: 'buy', signature: 'sig', wallet: 'W1', details: {} });
  });

  it('refuses by rule: per trade, allowed mints, allowed recipients by handle or wallet', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    given.accept(setPolicy(alice, { max_sol_per_trade: 0.5, allowed_mints: ['MINT'], allowed_recipients: ['@Bob', 'Wcarol'] }));
    expect(given.decide(spend(alice, 'r', 0.6))).toMatchObject({ ok: false, rejection: { code: 'policy_limit', details: { limit: 'max_sol_per_trade', used: 0.6, cap: 0.5 } } });
    expect(given.decide(spend(alice, 'r', 0.1, { mint: 'OTHER' }))).toMatchObject({ ok: false, rejection: { details: { limit: 'allowed_mints', mint: 'OTHER' } } });
    const to = (wallet: string, handle: string | null) => spend(alice, 'r', 0.1, { action: 'transfer', mint: null, recipient: { wallet, handle } });
    expect(given.decide(to('Wbob', 'bob'))).toEqual({ ok: true, events: [] });
    expect(given.decide(to('Wcarol', null))).toEqual({ ok: true, events: [] });
    expect(given.decide(to('Wdave', 'dave'))).toMatchObject({ ok: false, rejection: { details: { limit: 'allowed_recipients', recipient: 'dave' } } });
  });

  it('a check without reserving holds nothing back', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    given.accept(setPolicy(alice, { max_sol_per_day: 1 }));
    expect(given.decide(spend(alice, 'r', 0.5, { reserve: false }))).toEqual({ ok: true, events: [] });
    expect(given.decide(spend(alice, 'r', 1.5, { reserve: false }))).toMatchObject({ ok: false });
  });

  it("the operator's default policy is set in force with the registration", () => {
    const given = new GivenLedger(NOON);
    const policy = { ...NO_POLICY, max_sol_per_day: 2 };
    const entries = given.accept({ type: 'RegisterCitizen', data: { agent_id: 'agent_1', handle: 'h1', model: 'm', bio: '', wallet: 'W1', custody: 'service' }, policy });
    expect(entries.map((entry) => entry.type)).toEqual(['CitizenRegistered', 'PolicySet']);
    expect(policyInForce(given.state.policies, 'agent_1', NOON)).toEqual({ policy, pending: null });
  });
});
