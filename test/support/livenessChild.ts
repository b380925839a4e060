import { Liveness, openDatabase } from '@svc/readmodel';

/**
 * A process that holds its liveness and then waits to be killed: what an API process does for as long as it lives.
 * Usage: node --import tsx test/support/livenessChild.ts <database url>
 */
async function main(): Promise<void> {
  const database = await openDatabase({ url: process.argv[2], dataDir: '.' });
  const liveness = await Liveness.start(database, { applicationName: 'liveness-child' });
  console.log(JSON.stringify({ msg: 'holding', holder: liveness.holder }));
  setInterval(() => undefined, 60_000);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
