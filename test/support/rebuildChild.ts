/**
 * What `npm run replay` runs, in a process of its own that a test can SIGKILL: rebuilds every read model of
 * `schema` from seq 0 beside the live one, then swaps, writing each phase it enters on a line of stdout. Arguments:
 * database URL, schema, batch size, a data directory (unused with a URL).
 */
import { PostgresEventStore } from '@svc/ledger';
import { projections, rebuildReadModels } from '@svc/projections';
import { openDatabase } from '@svc/readmodel';

async function main(): Promise<void> {
  const [url, schema, batchSize, dataDir] = process.argv.slice(2);
  const database = await openDatabase({ url: url!, dataDir: dataDir! });
  const store = await new PostgresEventStore(database).init();
  await rebuildReadModels({ database, store, projections, schema: schema!, batchSize: Number(batchSize), onPhase: (phase) => process.stdout.write(`${phase}\n`) });
  await store.close();
  await database.close();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
