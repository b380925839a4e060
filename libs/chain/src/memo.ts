import { PublicKey, TransactionInstruction } from '@solana/web3.js';

/** SPL Memo (v2): logs its UTF-8 data and requires every account it names to have signed. */
export const MEMO_PROGRAM_ID = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

export function memoInstruction(memo: string, signer: PublicKey): TransactionInstruction {
  return new TransactionInstruction({ programId: MEMO_PROGRAM_ID, keys: [{ pubkey: signer, isSigner: true, isWritable: false }], data: Buffer.from(memo, 'utf8') });
}
