import BN from 'bn.js';
import { PublicKey } from '@solana/web3.js';
import { getPumpFeeProgram } from '@pump-fun/pump-sdk';
import { ProgramError } from '../../runtime/program';
import { PUMP_FEES_PROGRAM_ID } from '../pumpSwap/state';
import { findPda } from '../../runtime/pda';

/** pump-fees account layouts and errors, taken from the pump_fees IDL the pump SDK ships. */

export { PUMP_FEES_PROGRAM_ID };

const program = getPumpFeeProgram(null as never);
const idl = program.idl as unknown as {
  accounts: { name: string; discriminator: number[] }[];
  events: { name: string; discriminator: number[] }[];
  errors: { code: number; name: string; msg?: string }[];
};

const lowerFirst = (s: string) => s[0]!.toLowerCase() + s.slice(1);
const discriminator = (entries: { name: string; discriminator: number[] }[], name: string) => {
  const entry = entries.find((e) => e.name === lowerFirst(name));
  if (!entry) throw new Error(`pump_fees IDL has no ${name}`);
  return Buffer.from(entry.discriminator);
};

export type FeesErrorName =
  | 'InvalidSharingConfig'
  | 'InvalidPool'
  | 'SharingConfigAdminRevoked'
  | 'NoShareholders'
  | 'TooManyShareholders'
  | 'DuplicateShareholder'
  | 'NotEnoughRemainingAccounts'
  | 'InvalidShareTotal'
  | 'NotAuthorized'
  | 'ZeroShareNotAllowed'
  | 'SharingConfigNotActive'
  | 'AmmAccountsRequiredForGraduatedCoin'
  | 'ShareholderAccountMismatch'
  | 'DeprecatedInstruction'
  | 'InvalidMint';

export function feesError(name: FeesErrorName, detail?: string): ProgramError {
  const entry = idl.errors.find((e) => e.name === lowerFirst(name));
  if (!entry) throw new Error(`pump_fees IDL has no error ${name}`);
  return new ProgramError(entry.code, name, detail ?? entry.msg ?? name);
}

const pda = (seeds: Buffer[]) => findPda(seeds, PUMP_FEES_PROGRAM_ID);
export const FEES_EVENT_AUTHORITY = pda([Buffer.from('__event_authority')])[0];
export const sharingConfigPda = (mint: PublicKey) => pda([Buffer.from('sharing-config'), mint.toBuffer()]);
export const feeConfigPda = (configuredProgram: PublicKey) => pda([Buffer.from('fee_config'), configuredProgram.toBuffer()]);

export const MAX_SHAREHOLDERS = 10;
/** Room for the largest shareholder list, so later updates never realloc. */
export const SHARING_CONFIG_SIZE = 1024;
/** Configs created by the current program; version 1 configs (pre-update-once) are not editable. */
export const SHARING_CONFIG_VERSION = 2;

export interface Shareholder {
  address: PublicKey;
  shareBps: number;
}

export type ConfigStatus = 'Paused' | 'Active';

export interface SharingConfig {
  bump: number;
  version: number;
  status: ConfigStatus;
  mint: PublicKey;
  admin: PublicKey;
  adminRevoked: boolean;
  shareholders: Shareholder[];
}

const toCodedStatus = (s: ConfigStatus) => (s === 'Active' ? { active: {} } : { paused: {} });
const fromCodedStatus = (s: object): ConfigStatus => ('active' in s ? 'Active' : 'Paused');

export function encodeSharingConfig(config: SharingConfig): Buffer {
  const body = program.coder.types.encode('sharingConfig', { ...config, status: toCodedStatus(config.status) });
  const out = Buffer.alloc(SHARING_CONFIG_SIZE);
  discriminator(idl.accounts, 'SharingConfig').copy(out, 0);
  body.copy(out, 8);
  return out;
}

export function decodeSharingConfig(data: Buffer): SharingConfig | null {
  if (data.length < 8 || !data.subarray(0, 8).equals(discriminator(idl.accounts, 'SharingConfig'))) return null;
  const coded = program.coder.types.decode('sharingConfig', data.subarray(8)) as Omit<SharingConfig, 'status'> & { status: object };
  return { ...coded, status: fromCodedStatus(coded.status) };
}

export function encodeFeesEvent(name: string, fields: Record<string, unknown>): Buffer {
  const coded: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) coded[k] = typeof v === 'bigint' ? new BN(v.toString()) : v;
  if (coded.status) coded.status = toCodedStatus(coded.status as ConfigStatus);
  return Buffer.concat([discriminator(idl.events, name), program.coder.types.encode(lowerFirst(name), coded)]);
}

/**
 * FeeConfig (the PumpSwap one here, pump's own in programs/pump) has a single layout, kept by the pump emulation;
 * it is a pump-fees account, so the fees program re-exports it.
 */
export { encodeFeeConfig, decodeFeeConfig, FEE_CONFIG_CURRENT_SIZE as FEE_CONFIG_SIZE } from '../pump/state';
export type { FeeConfig } from '../pump/state';
