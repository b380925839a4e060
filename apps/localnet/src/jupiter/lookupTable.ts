import { createHash } from 'node:crypto';
import { AddressLookupTableAccount, AddressLookupTableProgram, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, SYSVAR_RENT_PUBKEY } from '@solana/web3.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, NATIVE_MINT, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { GLOBAL_PDA, PUMP_FEE_CONFIG_PDA, PUMP_SDK } from '@pump-fun/pump-sdk';
import { GLOBAL_CONFIG_PDA, PUMP_AMM_FEE_CONFIG_PDA, PUMP_AMM_SDK } from '@pump-fun/pump-swap-sdk';
import type { LocalChain } from '../chain/localChain';
import { EVENT_AUTHORITY as PUMP_EVENT_AUTHORITY, GLOBAL_VOLUME_ACCUMULATOR as PUMP_GLOBAL_VOLUME_ACCUMULATOR, PUMP_FEES_PROGRAM_ID, PUMP_PROGRAM_ID } from '../programs/pump/addresses';
import { EVENT_AUTHORITY as AMM_EVENT_AUTHORITY, GLOBAL_VOLUME_ACCUMULATOR as AMM_GLOBAL_VOLUME_ACCUMULATOR, PUMP_AMM_PROGRAM_ID } from '../programs/pumpSwap/state';
import { associatedTokenAddress } from '../runtime/pda';
import { accountInfo } from './venues';

/**
 * The aggregator's address lookup table, as Jupiter keeps its own: every address a route may name that is the same
 * for every market (programs, the venues' global state, fee recipients and their wrapped-SOL accounts). Two legs of
 * PumpSwap accounts do not fit 1,232 bytes of static keys; with these looked up they do.
 */
export const TABLE_AUTHORITY = Keypair.fromSeed(createHash('sha256').update('localnet aggregator lookup table').digest());

/** Addresses a lookup-table extension carries at most while staying within one transaction. */
const EXTEND_CHUNK = 20;

function sharedAddresses(chain: LocalChain): PublicKey[] {
  const globalInfo = accountInfo(chain, GLOBAL_PDA);
  const configInfo = accountInfo(chain, GLOBAL_CONFIG_PDA);
  const wsol = (owner: PublicKey) => associatedTokenAddress(NATIVE_MINT, owner, TOKEN_PROGRAM_ID);
  const addresses = [
    SystemProgram.programId, TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, ASSOCIATED_TOKEN_PROGRAM_ID, SYSVAR_RENT_PUBKEY, NATIVE_MINT,
    PUMP_PROGRAM_ID, PUMP_AMM_PROGRAM_ID, PUMP_FEES_PROGRAM_ID,
    GLOBAL_PDA, PUMP_FEE_CONFIG_PDA, PUMP_EVENT_AUTHORITY, PUMP_GLOBAL_VOLUME_ACCUMULATOR,
    GLOBAL_CONFIG_PDA, PUMP_AMM_FEE_CONFIG_PDA, AMM_EVENT_AUTHORITY, AMM_GLOBAL_VOLUME_ACCUMULATOR,
  ];
  if (globalInfo) {
    const global = PUMP_SDK.decodeGlobal(globalInfo);
    addresses.push(global.feeRecipient, ...global.feeRecipients, global.reservedFeeRecipient, ...global.reservedFeeRecipients, ...global.buybackFeeRecipients);
  }
  if (configInfo) {
    const config = PUMP_AMM_SDK.decodeGlobalConfig(configInfo);
    for (const recipient of [...config.protocolFeeRecipients, config.reservedFeeRecipient, ...config.reservedFeeRecipients, ...config.buybackFeeRecipients]) {
      addresses.push(recipient, wsol(recipient));
    }
  }
  const unique = new Map<string, PublicKey>();
  for (const address of addresses) if (!address.equals(PublicKey.default)) unique.set(address.toBase58(), address);
  return [...unique.values()];
}

function findTable(chain: LocalChain): AddressLookupTableAccount | null {
  for (const { pubkey, account } of chain.programAccounts(AddressLookupTableProgram.programId)) {
    const state = AddressLookupTableAccount.deserialize(account.data);
    if (state.authority?.equals(TABLE_AUTHORITY.publicKey)) return new AddressLookupTableAccount({ key: pubkey, state });
  }
  return null;
}

const pending = new WeakMap<LocalChain, Promise<AddressLookupTableAccount>>();

/**
 * The table, created (once per chain, by recorded localnet transactions) and extended with whatever shared address it
 * lacks. Addresses added in a slot are usable from the next one, so a change waits for it.
 */
export function routeLookupTable(chain: LocalChain): Promise<AddressLookupTableAccount> {
  let table = pending.get(chain);
  if (!table) {
    table = maintain(chain).finally(() => pending.delete(chain));
    pending.set(chain, table);
  }
  return table;
}

async function maintain(chain: LocalChain): Promise<AddressLookupTableAccount> {
  let table = findTable(chain);
  const wanted = sharedAddresses(chain);
  const missing = wanted.filter((a) => !table?.state.addresses.some((held) => held.equals(a)));
  if (missing.length === 0 && table) return table;
  const authority = TABLE_AUTHORITY.publicKey;
  if ((chain.account(authority)?.lamports ?? 0n) < BigInt(LAMPORTS_PER_SOL) / 10n) await chain.airdrop(authority, BigInt(LAMPORTS_PER_SOL));
  let address = table?.key;
  if (!address) {
    const [create, created] = AddressLookupTableProgram.createLookupTable({ authority, payer: authority, recentSlot: Math.max(0, chain.slot - 1) });
    await chain.sendAsLocalnet([create], [TABLE_AUTHORITY]);
    address = created;
  }
  for (let i = 0; i < missing.length; i += EXTEND_CHUNK) {
    const extend = AddressLookupTableProgram.extendLookupTable({ lookupTable: address, authority, payer: authority, addresses: missing.slice(i, i + EXTEND_CHUNK) });
    await chain.sendAsLocalnet([extend], [TABLE_AUTHORITY]);
  }
  await chain.untilSlot(chain.slot + 1);
  table = findTable(chain);
  if (!table) throw new Error('the aggregator lookup table was not created');
  return table;
}
