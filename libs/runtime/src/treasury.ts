import { Keypair, PublicKey } from '@solana/web3.js';
import { deployInstructions } from '@svc/chain';
import { TREASURY_HANDLE, type Citizen } from '@svc/domain';
import { newUlid } from '@svc/readmodel';
import { TREASURY_WALLET, type Runtime } from './runtime';

/** The service token the embedded start deployed, remembered among the service settings. */
export const SERVICE_TOKEN_SETTING = 'treasury_token_mint';

const SERVICE_TOKEN = {
  name: 'Agent Trading Society',
  symbol: 'SOCIETY',
  description: 'The service token of the Agent Trading Society: its treasury buys it back with its share of creator fees and burns it.',
};
/** A 1x1 png: the service token's image, hosted by the service like any deployed coin's. */
const SERVICE_TOKEN_IMAGE = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const MEDIA_PATH = '/api/v1/media';

async function treasuryCitizen(runtime: Runtime): Promise<Citizen | undefined> {
  return await runtime.writer.read((state) => {
    const id = state.citizens.byHandle.get(TREASURY_HANDLE);
    return id === undefined ? undefined : state.citizens.byId.get(id);
  });
}

/**
 * @treasury on the ledger, registered with the treasury service wallet the first time any process of the service
 * starts (every process may try at once: the ledger keeps one). Throws when the handle holds another wallet.
 */
export async function ensureTreasuryCitizen(runtime: Runtime): Promise<Citizen> {
  const wallet = (await runtime.serviceWallets.wallet(TREASURY_WALLET)).publicKey;
  const known = await treasuryCitizen(runtime);
  if (known?.wallet === wallet) return known;
  const outcome = await runtime.writer.execute({ type: 'RegisterTreasury', data: { agent_id: `agent_${newUlid()}`, wallet } });
  if (!outcome.ok) throw new Error(`@${TREASURY_HANDLE} cannot be registered: ${outcome.rejection.message}`);
  if (outcome.entries.length === 0) await runtime.writer.sync();
  const registered = await treasuryCitizen(runtime);
  if (registered?.wallet !== wallet) throw new Error(`@${TREASURY_HANDLE} is not on the ledger with the treasury wallet ${wallet}`);
  return registered;
}

/** The mint the treasury buys back: TREASURY_TOKEN_MINT, or the one the embedded start deployed. */
export async function serviceTokenMint(runtime: Runtime): Promise<string | undefined> {
  return runtime.config.treasuryTokenMint ?? (await runtime.serviceWallets.setting(SERVICE_TOKEN_SETTING));
}

/**
 * Deploys the service token as @treasury's own coin (a pump coin on its bonding curve, keeping its whole creator
 * fee) unless one is configured or was deployed before, and remembers it. The mint key is derived from the
 * master key, so a start that died halfway resumes the same deploy instead of making a second coin.
 */
export async function ensureServiceToken(runtime: Runtime): Promise<string> {
  const existing = await serviceTokenMint(runtime);
  if (existing) return existing;
  const treasury = await ensureTreasuryCitizen(runtime);
  const connection = runtime.chain.connection;
  const mint = Keypair.fromSeed(runtime.serviceWallets.derive('service-token-mint'));
  const owner = new PublicKey(treasury.wallet);
  const base = runtime.config.publicUrl;
  const image = await runtime.media.put(SERVICE_TOKEN_IMAGE, 'image/png');
  const imageUri = `${base}${MEDIA_PATH}/${image.sha256}`;
  const metadata = await runtime.media.put(
    Buffer.from(JSON.stringify({ ...SERVICE_TOKEN, image: imageUri, showName: true, createdOn: base })),
    'application/json',
  );
  const metadataUri = `${base}${MEDIA_PATH}/${metadata.sha256}`;
  const built = await deployInstructions(connection, {
    mint: mint.publicKey,
    user: owner,
    ...SERVICE_TOKEN,
    uri: metadataUri,
    mayhem: false,
    holderReward: false,
    devBuyLamports: 0n,
    slippageBps: 0,
    priorityLamports: 0n,
  });
  const summary = {
    mint: mint.publicKey.toBase58(),
    bonding_curve: built.bondingCurve.toBase58(),
    creator: built.creator.toBase58(),
    ...SERVICE_TOKEN,
    image: imageUri,
    metadata_uri: metadataUri,
    links: {},
    mayhem: false,
    holder_reward: false,
    dev_buy: { sol: 0, quoted_tokens: 0, min_tokens: 0 },
    fee_share: { status: 'off', shares: [] },
    service_token: true,
  };
  await runtime.pipeline.run({
    action: 'deploy',
    agentId: treasury.agentId,
    wallet: treasury.wallet,
    sign: true,
    idempotencyKey: 'service-token',
    request: { mint: summary.mint },
    record: { type: 'RecordAction', agentId: treasury.agentId, data: { action: 'deploy', wallet: treasury.wallet, details: summary } },
    summary,
    build: { kind: 'instructions', transaction: { instructions: built.instructions, signers: [mint], reference: mint.publicKey } },
  });
  await runtime.serviceWallets.setSetting(SERVICE_TOKEN_SETTING, summary.mint);
  runtime.log.info({ mint: summary.mint }, 'service token deployed');
  return summary.mint;
}
