import { loadConfig } from '@svc/config';

describe('configuration refuses values the service cannot run with, naming the variable', () => {
  test.each([
    ['LOCALNET_SOL_USD', '0'],
    ['LOCALNET_SOL_USD', '-3'],
    ['LOCALNET_PORT', '65535'],
    ['LOCALNET_PORT', 'many'],
    ['TREASURY_TOKEN_MINT', 'not-a-mint'],
    ['TREASURY_CYCLE_MS', '50'],
    ['TREASURY_RESERVE_SOL', '0'],
    ['TREASURY_SLIPPAGE_BPS', '10000'],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '-1'],
  ])('%s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });

  test('the defaults load', () => {
    expect(loadConfig({})).toMatchObject({ localnetPort: 8899, localnetSolUsd: 150, treasuryCycleMs: 60_000, treasuryReserveSol: 0.05, treasuryMinBuySol: 0.01 });
    expect(loadConfig({}).treasuryTokenMint).toBeUndefined();
    // 0 turns the treasury's schedule off: its cycles then run only when asked for.
    expect(loadConfig({ TREASURY_CYCLE_MS: '0' }).treasuryCycleMs).toBe(0);
  });
});
