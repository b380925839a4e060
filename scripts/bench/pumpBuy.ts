import BN from 'bn.js';
import { AccountInfo, Keypair, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { getAssociatedTokenAddressSync, TOKEN_2022_PROGRAM_ID } from '@solana/spl-token';
import { bondingCurvePda, GLOBAL_PDA, PUMP_SDK } from '@pump-fun/pump-sdk';
import type { LocalChain } from '../../apps/localnet/src/chain/localChain';
import { signWire } from './localnetTx';

/** A fresh coin on its curve and a buyer; `next` builds the SDK's buy of one more token unit each time. */
export async function pumpBuyFixture(chain: LocalChain): Promise<{ next: (blockhash: string) => Promise<Buffer> }> {
  const creator = Keypair.generate();
  const buyer = Keypair.generate();
  const mint = Keypair.generate();
  await chain.airdrop(creator.publicKey, 10n * BigInt(LAMPORTS_PER_SOL));
  await chain.airdrop(buyer.publicKey, 10_000n * BigInt(LAMPORTS_PER_SOL));
  const create = await PUMP_SDK.createV2Instruction({
    mint: mint.publicKey,
    name: 'Bench Coin',
    symbol: 'BENCH',
    uri: 'https://example.com/bench.json',
    creator: creator.publicKey,
    user: creator.publicKey,
    mayhemMode: false,
  });
  await chain.sendAsLocalnet([create], [creator, mint]);
  const info = (key: PublicKey): AccountInfo<Buffer> | null => {
    const account = chain.account(key);
    return account && { data: account.data, executable: account.executable, lamports: Number(account.lamports), owner: account.owner, rentEpoch: 0 };
  };
  const global = PUMP_SDK.decodeGlobal(info(GLOBAL_PDA)!);
  const userTokens = getAssociatedTokenAddressSync(mint.publicKey, buyer.publicKey, true, TOKEN_2022_PROGRAM_ID);
  let amount = 1_000_000;
  return {
    async next(blockhash) {
      const bondingCurveAccountInfo = info(bondingCurvePda(mint.publicKey))!;
      const instructions = await PUMP_SDK.buyInstructions({
        global,
        bondingCurveAccountInfo,
        bondingCurve: PUMP_SDK.decodeBondingCurve(bondingCurveAccountInfo),
        associatedUserAccountInfo: info(userTokens),
        mint: mint.publicKey,
        user: buyer.publicKey,
        amount: new BN(amount++),
        solAmount: new BN(LAMPORTS_PER_SOL),
        slippage: 1,
        tokenProgram: TOKEN_2022_PROGRAM_ID,
      });
      return signWire(buyer, blockhash, instructions);
    },
  };
}
