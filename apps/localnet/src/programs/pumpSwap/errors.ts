import { pumpAmmJson } from '@pump-fun/pump-swap-sdk';
import { ProgramError } from '../../runtime/program';

/** PumpSwap's custom errors, numbered as in the pump_amm IDL the swap SDK ships. */
export type AmmErrorName =
  | 'ZeroBaseAmount'
  | 'ZeroQuoteAmount'
  | 'ExceededSlippage'
  | 'InvalidBaseMint'
  | 'InvalidQuoteMint'
  | 'InvalidLpMint'
  | 'InvalidProtocolFeeRecipient'
  | 'InvalidPoolBaseTokenAccount'
  | 'InvalidPoolQuoteTokenAccount'
  | 'BuyMoreBaseAmountThanPoolReserves'
  | 'DisabledCreatePool'
  | 'DisabledBuy'
  | 'DisabledSell'
  | 'SameMint'
  | 'Overflow'
  | 'NewSizeLessThanCurrentSize'
  | 'AccountTypeNotSupported'
  | 'OnlyCanonicalPumpPoolsCanHaveCoinCreator'
  | 'BuyNotEnoughQuoteTokensToCoverFees'
  | 'BuySlippageBelowMinBaseAmountOut'
  | 'InvalidSharingConfigBaseMint'
  | 'InvalidSharingConfigCoinCreator'
  | 'CreatorVaultMigratedToSharingConfig'
  | 'InsufficientRealQuoteReserves';

export function ammError(name: AmmErrorName, detail?: string): ProgramError {
  const entry = pumpAmmJson.errors.find((e) => e.name === name);
  if (!entry) throw new Error(`pump_amm IDL has no error ${name}`);
  return new ProgramError(entry.code, name, detail ?? ('msg' in entry && typeof entry.msg === 'string' ? entry.msg : name));
}
