import { loadConfig } from '@svc/config';

describe('configuration refuses values the service cannot run with, naming the variable', () => {
  test.each([
    ['LOCALNET_SOL_USD', '0'],
    ['LOCALNET_SOL_USD', '-3'],
    ['LOCALNET_PORT', '65535'],
    ['LOCALNET_PORT', 'many'],
  ])('%s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });

  test('the defaults load', () => {
    expect(loadConfig({})).toMatchObject({ localnetPort: 8899, localnetSolUsd: 150 });
  });
});
