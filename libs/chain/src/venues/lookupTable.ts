import {
  AddressLookupTableProgram,
  Keypair,
  PublicKey,
  TransactionMessage,
  VersionedTransaction,
  type AddressLookupTableAccount,
  type Connection,
} from '@solana/web3.js';
import { deployInstructions } from './deploy';
import { recentBlockhash, sendAndConfirm, signTransaction } from '../transactions';

/** The most a transaction may be on the wire. */
export const PACKET_DATA_SIZE = 1232;
/** How long a new table's extension may take to become usable (the next slot) before the deploy gives up. */
const WARMUP_MS = 15_000;
/** An address lookup table's bytes before its addresses (LOOKUP_TABLE_META_SIZE). */
const TABLE_META_BYTES = 56;
/** What the create-and-extend transaction's fee may cost at most, above the table's rent. */
const FEE_MARGIN_LAMPORTS = 20_000n;

/** What became of an attempt to make the table: ready, or not, because its payer cannot pay `needed` lamports. */
export type TableMaking =
  | { made: true; table: AddressLookupTableAccount }
  | { made: false; payer: PublicKey; needed: bigint; available: bigint };

export interface LookupTableDeps {
  connection(): Connection;
  /** The service wallet that pays for and owns the table. */
  payer(): Promise<Keypair>;
  load(): Promise<string | undefined>;
  save(address: string): Promise<void>;
}

/**
 * The keys every deploy names whatever its mint and creator (pump's Global, fee recipients, programs, ...): two
 * template deploys per flavour, intersected, so the list follows whatever the SDK builds.
 */
async function staticDeployKeys(connection: Connection): Promise<PublicKey[]> {
  const keys = new Map<string, PublicKey>();
  for (const mayhem of [false, true]) {
    const builds = await Promise.all(
      [0, 1].map(() =>
        deployInstructions(connection, {
          mint: Keypair.generate().publicKey,
          user: Keypair.generate().publicKey,
          name: 'x',
          symbol: 'x',
          uri: 'x',
          mayhem,
          holderReward: false,
          devBuyLamports: 1_000_000n,
          slippageBps: 0,
          priorityLamports: 0n,
        }),
      ),
    );
    const [a, b] = builds.map((built) => new Set(built.instructions.flatMap((ix) => [ix.programId, ...ix.keys.filter((k) => !k.isSigner).map((k) => k.pubkey)]).map((k) => k.toBase58())));
    for (const key of a!) if (b!.has(key)) keys.set(key, new PublicKey(key));
  }
  return [...keys.values()];
}

/**
 * A create_v2 with a dev buy and a long name and URI is over the 1,232-byte limit; an address lookup table of the
 * keys every deploy shares brings it well under. The workers make the table (its treasury pays) once the treasury
 * can pay, remember it, and extend it when the SDK starts naming new shared keys; a deploy only reads it, so a
 * caller's request never waits on, or fails for, the treasury's funds.
 */
export class DeployLookupTable {
  private found?: AddressLookupTableAccount;

  constructor(private readonly deps: LookupTableDeps) {}

  /** The table the workers made, or null while there is none. Kept once found: a table only ever grows. */
  async existing(): Promise<AddressLookupTableAccount | null> {
    if (this.found) return this.found;
    const remembered = await this.deps.load();
    if (!remembered) return null;
    const table = (await this.deps.connection().getAddressLookupTable(new PublicKey(remembered), { commitment: 'confirmed' })).value;
    if (table) this.found = table;
    return table;
  }

  /** Whether the workers made the table: remembered only once it is made and usable, so no chain read is needed. */
  async made(): Promise<boolean> {
    return this.found !== undefined || (await this.deps.load()) !== undefined;
  }

  /** Makes the table, or extends it with the shared keys it lacks, when its payer can pay for that. */
  async ensure(): Promise<TableMaking> {
    const connection = this.deps.connection();
    const wanted = await staticDeployKeys(connection);
    const remembered = await this.deps.load();
    const existing = remembered ? (await connection.getAddressLookupTable(new PublicKey(remembered), { commitment: 'confirmed' })).value : null;
    const payer = await this.deps.payer();
    let address = existing?.key;
    const have = new Set(existing?.state.addresses.map((k) => k.toBase58()) ?? []);
    const missing = wanted.filter((k) => !have.has(k.toBase58()));
    if (existing && missing.length === 0) return { made: true, table: existing };
    const rent = async (addresses: number) => BigInt(await connection.getMinimumBalanceForRentExemption(TABLE_META_BYTES + 32 * addresses, 'confirmed'));
    const needed = (await rent(have.size + missing.length)) - (existing ? await rent(have.size) : 0n) + FEE_MARGIN_LAMPORTS;
    const available = BigInt(await connection.getBalance(payer.publicKey, 'confirmed'));
    if (available < needed) return { made: false, payer: payer.publicKey, needed, available };
    const instructions = [];
    if (!address) {
      const slot = await connection.getSlot('finalized');
      const [create, created] = AddressLookupTableProgram.createLookupTable({ authority: payer.publicKey, payer: payer.publicKey, recentSlot: slot });
      instructions.push(create);
      address = created;
    }
    instructions.push(AddressLookupTableProgram.extendLookupTable({ lookupTable: address, authority: payer.publicKey, payer: payer.publicKey, addresses: missing }));
    const recent = await recentBlockhash(connection);
    const message = new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: recent.blockhash, instructions }).compileToV0Message();
    const { slot } = await sendAndConfirm(connection, signTransaction(new VersionedTransaction(message), [payer], recent));
    // A table's new keys are usable from the slot after the one that added them; deploys find it only then.
    const deadline = Date.now() + WARMUP_MS;
    while ((await connection.getSlot('confirmed')) <= slot) {
      if (Date.now() > deadline) throw new Error('the deploy lookup table did not warm up');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const table = (await connection.getAddressLookupTable(address, { commitment: 'confirmed' })).value;
    if (!table) throw new Error(`the deploy lookup table ${address.toBase58()} is missing after it was created`);
    await this.deps.save(address.toBase58());
    this.found = table;
    return { made: true, table };
  }
}
