import { sealEntry, GENESIS_HASH, type LedgerEntry } from '@svc/ledger';
import { ledgerModel, type LedgerCommand, type LedgerState } from '@svc/domain';

const NOW = 1_800_000_000_000;

function register(agent: string, handle: string, wallet: string): LedgerCommand {
  return { type: 'RegisterCitizen', data: { agent_id: agent, handle, model: 'm', bio: '', wallet, custody: 'service' } };
}

/** given these commands were accepted, when `command` is decided, then ... */
function given(...commands: LedgerCommand[]): LedgerState {
  const state = ledgerModel.initialState();
  let prev = GENESIS_HASH;
  let seq = 0;
  for (const command of commands) {
    const decision = ledgerModel.decide(command, state, NOW);
    if (!decision.ok) throw new Error(`given: ${decision.rejection.code}`);
    for (const event of decision.events) {
      const entry: LedgerEntry = sealEntry(prev, { seq: seq++, type: event.type, at: NOW, actor: event.actor, data: event.data });
      ledgerModel.evolve(state, entry);
      prev = entry.hash;
    }
  }
  return state;
}

describe('registering a citizen', () => {
  it('emits CitizenRegistered with the public profile only', () => {
    const decision = ledgerModel.decide(register('agent_1', 'Alice', 'W1'), given(), NOW);
    expect(decision).toEqual({
      ok: true,
      events: [
        { type: 'CitizenRegistered', actor: 'agent_1', data: { agent_id: 'agent_1', handle: 'Alice', model: 'm', bio: '', wallet: 'W1', custody: 'service' } },
      ],
    });
  });

  it('refuses a handle that differs only in case', () => {
    const decision = ledgerModel.decide(register('agent_2', 'ALICE', 'W2'), given(register('agent_1', 'alice', 'W1')), NOW);
    expect(decision).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
  });

  it('refuses a wallet that already belongs to a citizen', () => {
    const decision = ledgerModel.decide(register('agent_2', 'bob', 'W1'), given(register('agent_1', 'alice', 'W1')), NOW);
    expect(decision).toMatchObject({ ok: false, rejection: { code: 'wallet_taken' } });
  });

  it('accepts distinct handles and wallets', () => {
    const state = given(register('agent_1', 'alice', 'W1'), register('agent_2', 'bob', 'W2'));
    expect(state.citizens.byId.size).toBe(2);
    expect(state.citizens.byHandle.get('bob')).toBe('agent_2');
  });

  it('survives a snapshot round trip with the same decisions', () => {
    const state = given(register('agent_1', 'alice', 'W1'));
    const restored = ledgerModel.restore(JSON.parse(JSON.stringify(ledgerModel.snapshot(state))));
    expect(ledgerModel.decide(register('agent_2', 'Alice', 'W9'), restored, NOW)).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
    expect(ledgerModel.decide(register('agent_2', 'carol', 'W1'), restored, NOW)).toMatchObject({ ok: false, rejection: { code: 'wallet_taken' } });
  });

  it('ignores an event type a newer build wrote', () => {
    const state = given();
    ledgerModel.evolve(state, sealEntry(GENESIS_HASH, { seq: 0, type: 'SomethingNew', at: NOW, actor: 'x', data: {} }));
    expect(state.citizens.byId.size).toBe(0);
  });
});
