import { randomBytes } from 'node:crypto';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { openDatabase } from '@svc/readmodel';
import { Vault, generateWallet } from '@svc/vault';
import { freshDatabase, tempDir } from '../test/support/env';
import { runEntry } from '../test/support/spawn';

/**
 * `npm run bench:rekey`: `npm run rekey` on a fresh database holding BENCH_WALLETS (1,000) custody wallets sealed
 * under an old master key, as its own process; prints the rate it reports, then opens every wallet with the new
 * key alone and has it sign a transfer, verified against its public key.
 */
async function main(): Promise<void> {
  const count = Number(process.env.BENCH_WALLETS ?? 1_000);
  const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
  const db = await freshDatabase('bench_rekey');
  const dataDir = tempDir('bench-rekey');
  try {
    const database = await openDatabase({ url: db.url, dataDir, applicationName: 'bench-rekey' });
    const before = await new Vault(database, oldKey).init();
    const wallets = Array.from({ length: count }, (_, i) => ({ agentId: `agent_bench_${i}`, wallet: generateWallet() }));
    await Promise.all(wallets.map(({ agentId, wallet }) => before.addCredential({ agentId, apiKey: `svc_sk_${agentId}`, walletSecret: wallet.secretKey })));
    process.stdout.write(`bench:rekey: ${count} custody wallets sealed under the old key\n`);

    const run = await runEntry('scripts/rekey.ts', [], {
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      SERVICE_MASTER_KEY: newKey.toString('base64'),
      SERVICE_MASTER_KEY_OLD: oldKey.toString('base64'),
    });
    process.stdout.write(run.output);
    if (run.status !== 0) throw new Error(`npm run rekey exited ${run.status}`);

    const after = new Vault(database, newKey);
    const blockhash = new PublicKey(randomBytes(32)).toBase58();
    let signed = 0;
    for (const { agentId, wallet } of wallets) {
      const keypair = Keypair.fromSecretKey(new Uint8Array((await after.walletSecret(agentId))!));
      if (keypair.publicKey.toBase58() !== wallet.publicKey) throw new Error(`${agentId} opened to another key`);
      const transfer = new Transaction({ feePayer: keypair.publicKey, recentBlockhash: blockhash }).add(
        SystemProgram.transfer({ fromPubkey: keypair.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }),
      );
      transfer.sign(keypair);
      if (!transfer.verifySignatures()) throw new Error(`${agentId} did not sign`);
      signed += 1;
    }
    process.stdout.write(`bench:rekey: ${signed}/${count} wallets opened with the new key alone and signed a transfer\n`);
    await database.close();
  } finally {
    await db.drop();
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
