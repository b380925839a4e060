import { parseArgs } from 'node:util';
import { loadConfig } from '@svc/config';
import { openDatabase } from '@svc/readmodel';
import { Keyring, previousMasterKeys, rekeyVault, type RekeyProgress } from '@svc/vault';

/**
 * `npm run rekey`: seals everything the master key protects (custody wallets, service wallets, doorbell URLs and
 * secrets, stored replies) again under SERVICE_MASTER_KEY, reading it with the key(s) in SERVICE_MASTER_KEY_OLD.
 * Each batch commits on its own and only values not under the new key are read, so a run that stops is taken up
 * by the next. The service may keep running meanwhile, given both variables; once a run says `complete`, drop
 * SERVICE_MASTER_KEY_OLD. `--batch <rows>` per transaction, `--limit <rows>` to stop after that many.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { batch: { type: 'string' }, limit: { type: 'string' } } });
  const config = loadConfig();
  if (!config.serviceMasterKey || !config.serviceMasterKeyOld) {
    throw new Error('set SERVICE_MASTER_KEY to the new master key and SERVICE_MASTER_KEY_OLD to the one it replaces (for the embedded start: SERVICE_MASTER_KEY_OLD=$(cat DATA_DIR/master.key))');
  }
  const current = Buffer.from(config.serviceMasterKey, 'base64');
  if (current.length !== 32) throw new Error('SERVICE_MASTER_KEY must be 32 bytes, base64-encoded');
  const keys = new Keyring(current, previousMasterKeys(config.serviceMasterKeyOld));
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, applicationName: 'svc-rekey' });
  const started = performance.now();
  let batches = 0;
  const onProgress = ({ table, resealed }: RekeyProgress) => {
    batches += 1;
    if (batches % 20 === 0) process.stdout.write(`rekey: ${table} ${resealed} so far\n`);
  };
  try {
    const outcome = await rekeyVault(database, keys, 'vault', { batch: positive(values.batch, 'batch'), limit: positive(values.limit, 'limit'), onProgress });
    const seconds = (performance.now() - started) / 1000;
    const total = Object.values(outcome.resealed).reduce((a, b) => a + b, 0);
    for (const [table, n] of Object.entries(outcome.resealed)) process.stdout.write(`rekey: ${table} ${n} re-sealed\n`);
    process.stdout.write(
      `rekey: ${total} rows re-sealed under key ${keys.kid} in ${seconds.toFixed(2)} s (${Math.round(total / Math.max(seconds, 1e-9))} rows/s); ` +
        `${outcome.raced} changed meanwhile; ${outcome.complete && outcome.raced === 0 ? 'complete: SERVICE_MASTER_KEY_OLD may go' : 'not complete: run it again'}\n`,
    );
    // Mint keys derived from the master key (a deploy retried under its Idempotency-Key) change with it.
    process.stdout.write('rekey: mints derived from the old key are not derived again: a deploy begun before the rotation and retried after it makes a new coin\n');
  } finally {
    await database.close();
  }
}

function positive(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} takes a positive whole number`);
  return n;
}

main().catch((error) => {
  process.stderr.write(`rekey failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
