import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { ComputeBudgetProgram, PublicKey, VersionedTransaction, type Connection, type MessageAccountKeys, type VersionedMessage } from '@solana/web3.js';

/** sha256 (hex) of a message's bytes: the identity of a transaction before anyone signs it. */
export function messageHash(message: VersionedMessage): string {
  return createHash('sha256').update(message.serialize()).digest('hex');
}

interface ComparableInstruction {
  program: string;
  accounts: string[];
  data: string;
}

function actionInstructions(message: VersionedMessage, keys: MessageAccountKeys): ComparableInstruction[] {
  return message.compiledInstructions
    .map((ix) => ({
      program: keys.get(ix.programIdIndex)!.toBase58(),
      accounts: ix.accountKeyIndexes.map((i) => keys.get(i)!.toBase58()),
      data: Buffer.from(ix.data).toString('hex'),
    }))
    .filter((ix) => ix.program !== ComputeBudgetProgram.programId.toBase58());
}

/**
 * True when `landed` does what `handedOut` asked for: the same fee payer and the same instructions in the
 * same order, ignoring compute-budget ones (a wallet may set its own priority fee) and the blockhash (a
 * wallet may refresh it). A transaction that merely names the reference, or changes any amount, account or
 * program, does not match.
 */
export function sameAction(handedOut: VersionedMessage, landed: VersionedMessage, landedKeys: MessageAccountKeys = landed.getAccountKeys()): boolean {
  if (!handedOut.staticAccountKeys[0]?.equals(landed.staticAccountKeys[0]!)) return false;
  const expected = actionInstructions(handedOut, handedOut.getAccountKeys());
  const actual = actionInstructions(landed, landedKeys);
  return expected.length === actual.length && expected.every((ix, i) => JSON.stringify(ix) === JSON.stringify(actual[i]));
}

const SIGNATURE_PAGE = 1000;
const TRANSACTION_BATCH = 100;

/**
 * The confirmed, successful transaction naming `reference` that does what `handedOut` asked (sameAction),
 * landed at or after `sinceSlot`; undefined when none has. It walks every signature that names the
 * reference back to `sinceSlot`, so no number of other transactions naming it (anyone may add it to
 * theirs) hides the real one.
 */
export async function findHandedOut(
  connection: Connection,
  handedOut: VersionedMessage,
  reference: string,
  sinceSlot: number,
  pageSize = SIGNATURE_PAGE,
): Promise<{ signature: string; wire: Uint8Array; slot: number } | undefined> {
  const key = new PublicKey(reference);
  let before: string | undefined;
  for (;;) {
    const page = await connection.getSignaturesForAddress(key, { before, limit: pageSize }, 'confirmed');
    const candidates = page.filter((s) => !s.err && s.slot >= sinceSlot).map((s) => s.signature);
    for (let i = 0; i < candidates.length; i += TRANSACTION_BATCH) {
      const batch = candidates.slice(i, i + TRANSACTION_BATCH);
      const txs = await connection.getTransactions(batch, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
      for (const [j, tx] of txs.entries()) {
        if (!tx || !tx.meta || tx.meta.err) continue;
        const keys = tx.transaction.message.getAccountKeys({ accountKeysFromLookups: tx.meta.loadedAddresses });
        if (!sameAction(handedOut, tx.transaction.message, keys)) continue;
        const signed = new VersionedTransaction(tx.transaction.message, tx.transaction.signatures.map((s) => bs58.decode(s)));
        return { signature: batch[j]!, wire: signed.serialize(), slot: tx.slot };
      }
    }
    const oldest = page.at(-1);
    if (page.length < pageSize || !oldest || oldest.slot < sinceSlot) return undefined;
    before = oldest.signature;
  }
}
