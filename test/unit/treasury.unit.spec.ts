import { kindOf, treasuryFlowOf, type LedgerCommand } from '@svc/domain';
import { GivenLedger } from '../support/ledgerModel';

const NOW = 1_800_000_000_000;
const TREASURY_WALLET = 'TreasuryWallet1111111111111111111111111111111';

const registerTreasury = (agentId: string, wallet = TREASURY_WALLET): LedgerCommand => ({ type: 'RegisterTreasury', data: { agent_id: agentId, wallet } });
const register = (agentId: string, handle: string, wallet: string): LedgerCommand => ({
  type: 'RegisterCitizen',
  data: { agent_id: agentId, handle, model: 'm', bio: '', wallet, custody: 'service' },
});
const record = (agentId: string, wallet: string, action: 'buyback' | 'buy', signature: string): LedgerCommand => ({
  type: 'RecordAction',
  agentId,
  data: { action, signature, wallet, details: {} },
});

describe('@treasury on the ledger', () => {
  it('is registered once, by the service, with the treasury wallet and service custody', () => {
    const ledger = new GivenLedger(NOW);
    const [entry] = ledger.accept(registerTreasury('agent_T'));
    expect(entry).toMatchObject({ type: 'CitizenRegistered', actor: 'agent_T', data: { agent_id: 'agent_T', handle: 'treasury', wallet: TREASURY_WALLET, custody: 'service' } });
    // Every process registers it at start: the second and later ones change nothing, whatever id they proposed.
    expect(ledger.decide(registerTreasury('agent_U'))).toEqual({ ok: true, events: [] });
  });

  it('refuses to register @treasury with another wallet than the one it has', () => {
    const ledger = new GivenLedger(NOW);
    ledger.accept(registerTreasury('agent_T'));
    expect(ledger.decide(registerTreasury('agent_U', 'OtherWallet'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
  });

  it.each(['treasury', 'Treasury', 'TREASURY'])('refuses the handle %s to a citizen, before and after the treasury exists', (handle) => {
    const ledger = new GivenLedger(NOW);
    expect(ledger.decide(register('agent_1', handle, 'W1'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken', details: { reserved: true } } });
    ledger.accept(registerTreasury('agent_T'));
    expect(ledger.decide(register('agent_1', handle, 'W1'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
  });

  it('records buybacks for @treasury only', () => {
    const ledger = new GivenLedger(NOW);
    ledger.accept(registerTreasury('agent_T'));
    ledger.accept(register('agent_1', 'alice', 'W1'));
    expect(ledger.decide(record('agent_1', 'W1', 'buyback', 'S1'))).toMatchObject({ ok: false, rejection: { code: 'invalid_request' } });
    const [entry] = ledger.accept(record('agent_T', TREASURY_WALLET, 'buyback', 'S2'));
    expect(entry).toMatchObject({ type: 'ActionRecorded', actor: 'agent_T', data: { action: 'buyback', signature: 'S2' } });
  });
});

describe('a buyback is announced as its own kind', () => {
  it('is `buyback`; every other action is `action`', () => {
    expect(kindOf('ActionRecorded', { action: 'buyback' })).toBe('buyback');
    expect(kindOf('ActionRecorded', { action: 'burn' })).toBe('action');
    expect(kindOf('ActionRecorded')).toBe('action');
    expect(kindOf('CitizenRegistered', { action: 'buyback' })).toBe('ledger');
  });
});

describe('what a treasury transaction adds to the totals, from what the chain showed', () => {
  it('a distribution brings in its balance change plus the fee it paid', () => {
    const flow = treasuryFlowOf({ action: 'fee_distribution', details: { observed: { fee_lamports: 5000, sol_change_lamports: 295_000, rent_lamports: 0 } } });
    expect(flow).toEqual({ received_lamports: 300_000n, spent_lamports: 0n, bought_raw: 0n, burned_raw: 0n });
  });

  it('a buyback spends its balance change less the fee and the opening rent of its own accounts, and buys its token change', () => {
    const flow = treasuryFlowOf({
      action: 'buyback',
      details: { observed: { fee_lamports: 105_000, sol_change_lamports: -1_003_705_000, rent_lamports: 3_600_000, token_change_raw: '34123456789' } },
    });
    expect(flow).toEqual({ received_lamports: 0n, spent_lamports: 1_000_000_000n, bought_raw: 34_123_456_789n, burned_raw: 0n });
  });

  it('a burn destroys burned_raw; anything else counts nothing', () => {
    expect(treasuryFlowOf({ action: 'burn', details: { burned_raw: '900000000000000' } })).toMatchObject({ burned_raw: 900_000_000_000_000n });
    expect(treasuryFlowOf({ action: 'deploy', details: { observed: { fee_lamports: 5000, sol_change_lamports: -5000, rent_lamports: 0 } } })).toEqual({
      received_lamports: 0n,
      spent_lamports: 0n,
      bought_raw: 0n,
      burned_raw: 0n,
    });
    // A record without its observed balances (none is ever written so) adds nothing rather than guessing.
    expect(treasuryFlowOf({ action: 'buyback', details: { spent_sol: 1 } }).spent_lamports).toBe(0n);
  });
});
