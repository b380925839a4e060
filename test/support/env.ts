import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig, type Config } from '@svc/config';

/** The real servers the tests use; .ci/run points these at the run's own instances. */
export const PG_ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export interface FreshDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A new, empty PostgreSQL database for one test file, dropped afterwards. */
export async function freshDatabase(label: string): Promise<FreshDatabase> {
  const name = `svc_t_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: withDatabase(PG_ADMIN_URL, name),
    async drop() {
      const client = new pg.Client({ connectionString: PG_ADMIN_URL });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

export function tempDir(label: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `svc-${label}-`));
}

/**
 * A configuration as the environment would give it, for a test: port 0, quiet logs, generous limits, and no
 * treasury cycles of their own (a test runs one with `workers.treasury.runCycle()`), since a cycle distributes
 * the fees of every sharing coin and spends the treasury's SOL whenever it comes; nor ledger anchors.
 */
export function testConfig(env: Record<string, string | undefined>): Config {
  return loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    RATE_LIMIT_RPS: '100000',
    REGISTER_PER_IP_PER_HOUR: '100000',
    LOCALNET_PORT: '0',
    REDIS_PREFIX: `t${randomBytes(4).toString('hex')}`,
    TREASURY_CYCLE_MS: '0',
    // A scheduled full attest pass would compete with the test for the database; tests start theirs on demand.
    ATTEST_FULL_EVERY_MS: '0',
    // An anchor appends to the ledger whenever 1,000 entries follow the last: a test that writes that many would
    // see an entry it did not make land at any moment. The anchor tests turn it on with their own cadence.
    ANCHOR_EVERY_ENTRIES: '0',
    ...env,
  } as NodeJS.ProcessEnv);
}
