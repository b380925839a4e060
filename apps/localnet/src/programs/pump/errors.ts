import { ProgramError } from '../../runtime/program';
import { IDL } from './codec';

export type PumpErrorName =
  | 'NotAuthorized'
  | 'TooMuchSolRequired'
  | 'TooLittleSolReceived'
  | 'MintDoesNotMatchBondingCurve'
  | 'BondingCurveComplete'
  | 'BondingCurveNotComplete'
  | 'NewSizeShouldBeGreaterThanCurrentSize'
  | 'AccountTypeNotSupported'
  | 'PoolMigrationFeeShouldBeLessThanFinalRealSolReserves'
  | 'DisabledMigrate'
  | 'BuyZeroAmount'
  | 'NotEnoughTokensToBuy'
  | 'SellZeroAmount'
  | 'NotEnoughTokensToSell'
  | 'Overflow'
  | 'CreatorShouldNotBeZero'
  | 'BuyNotEnoughSolToCoverFees'
  | 'BuySlippageBelowMinTokensOut'
  | 'NameTooLong'
  | 'SymbolTooLong'
  | 'UriTooLong'
  | 'CreateV2Disabled'
  | 'MayhemModeDisabled'
  | 'UnableToDistributeCreatorVaultMigratedToSharingConfig'
  | 'SharingConfigNotActive'
  | 'UnableToDistributeCreatorFeesToExecutableRecipient'
  | 'BondingCurveAndSharingConfigCreatorMismatch'
  | 'ShareholdersAndRemainingAccountsMismatch'
  | 'BuybackFeeRecipientNotAuthorized'
  | 'BuybackFeeRecipientMissing'
  | 'UnsupportedQuoteMint'
  | 'UnableToDistributeCreatorFeesToUninitializedAccount'
  | 'InvalidBondingCurveV2'
  | 'BondingCurveAlreadyMigrated'
  | 'CashbackDeprecated'
  | 'HolderRewardDisabled';

/** A pump error with the number and message of the IDL the SDK ships. */
export function pumpError(name: PumpErrorName, detail?: string): ProgramError {
  const entry = IDL.errors.find((e) => e.name === name);
  if (!entry) throw new Error(`pump IDL has no error ${name}`);
  return new ProgramError(entry.code, name, detail ?? entry.msg ?? name);
}
