import fs from 'node:fs';
import path from 'node:path';
import { CONFIG_VARIABLES, loadConfig } from '@svc/config';

describe('the README', () => {
  const readme = fs.readFileSync(path.resolve(__dirname, '../../README.md'), 'utf8');

  it.each(CONFIG_VARIABLES)('documents %s in the configuration table', (name) => {
    expect(readme).toMatch(new RegExp(`^\\| \`${name}\` \\| [^|]+ \\| [^|]+ \\|$`, 'm'));
  });

  it('shows the two set-up commands', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm test');
  });

  it('states defaults that are the defaults the code uses', () => {
    const config = loadConfig({});
    for (const [name, value] of [
      ['PORT', config.port],
      ['LOCALNET_PORT', config.localnetPort],
      ['REGISTER_PER_IP_PER_HOUR', config.registerPerIpPerHour],
      ['RATE_LIMIT_RPS', config.requestsPerSecond],
      ['READ_YOUR_WRITES_MS', config.readYourWritesMs],
      ['SNAPSHOT_EVERY', config.snapshotEvery],
      ['DATABASE_CONNECT_TIMEOUT_MS', config.databaseConnectTimeoutMs],
      ['DATABASE_STATEMENT_TIMEOUT_MS', config.databaseStatementTimeoutMs],
      ['DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', config.databaseIdleInTransactionTimeoutMs],
      ['ATTEST_FULL_EVERY_MS', config.attestFullEveryMs],
      ['PROJECTOR_BATCH_SIZE', config.projectorBatchSize],
      ['PROJECTOR_HEALTH_PORT', config.projectorHealthPort],
      ['READ_MODEL_SCHEMA', config.readModelSchema],
      ['BODY_LIMIT', config.bodyLimit],
      ['FAUCET_SOL_PER_HOUR', config.faucetSolPerHour],
      ['POLICY_DELAY_MS', config.policyDelayMs],
    ] as const) {
      expect(readme).toContain(`| \`${name}\` | \`${value}\` |`);
    }
  });

  it('names no file a clone does not have', () => {
    const root = path.resolve(__dirname, '../..');
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        if (entry.name === 'node_modules' || entry.name === '.git' || entry.name === 'data') continue;
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else files.push(path.relative(root, full));
      }
    };
    walk(root);
    // A file name in code spans (`scripts/start.ts`, `loop.ts`); paths the service serves start with a slash, and
    // names with a placeholder (`<timestamp>`) are what a command writes.
    const named = [...readme.matchAll(/`([\w.-]+(?:\/[\w.-]+)*\.(?:md|ts|json|ya?ml|js|sh))`/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(0);
    const missing = named.filter((name) => !files.some((file) => file === name || file.endsWith(`/${name}`)));
    expect(missing).toEqual([]);
  });
});
