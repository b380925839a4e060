/**
 * Transaction and instruction errors in the JSON shapes that Solana's RPC returns (and web3.js parses),
 * with the messages agave prints for them.
 */
export type TransactionErrorJson = string | { InstructionError: [number, InstructionErrorJson] } | Record<string, unknown>;
export type InstructionErrorJson = string | { Custom: number } | { BorshIoError: string };

// Indexed by litesvm's const enums (same order as the Rust enums).
export const TRANSACTION_ERRORS = [
  'AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound', 'InsufficientFundsForFee',
  'InvalidAccountForFee', 'AlreadyProcessed', 'BlockhashNotFound', 'CallChainTooDeep', 'MissingSignatureForFee',
  'InvalidAccountIndex', 'SignatureFailure', 'InvalidProgramForExecution', 'SanitizeFailure', 'ClusterMaintenance',
  'AccountBorrowOutstanding', 'WouldExceedMaxBlockCostLimit', 'UnsupportedVersion', 'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit', 'WouldExceedAccountDataBlockLimit', 'TooManyAccountLocks',
  'AddressLookupTableNotFound', 'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex', 'InvalidRentPayingAccount', 'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit', 'MaxLoadedAccountsDataSizeExceeded', 'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit', 'UnbalancedTransaction', 'ProgramCacheHitMaxLimit', 'CommitCancelled',
] as const;

export const INSTRUCTION_ERRORS = [
  'GenericError', 'InvalidArgument', 'InvalidInstructionData', 'InvalidAccountData', 'AccountDataTooSmall',
  'InsufficientFunds', 'IncorrectProgramId', 'MissingRequiredSignature', 'AccountAlreadyInitialized',
  'UninitializedAccount', 'UnbalancedInstruction', 'ModifiedProgramId', 'ExternalAccountLamportSpend',
  'ExternalAccountDataModified', 'ReadonlyLamportChange', 'ReadonlyDataModified', 'DuplicateAccountIndex',
  'ExecutableModified', 'RentEpochModified', 'NotEnoughAccountKeys', 'AccountDataSizeChanged',
  'AccountNotExecutable', 'AccountBorrowFailed', 'AccountBorrowOutstanding', 'DuplicateAccountOutOfSync',
  'InvalidError', 'ExecutableDataModified', 'ExecutableLamportChange', 'ExecutableAccountNotRentExempt',
  'UnsupportedProgramId', 'CallDepth', 'MissingAccount', 'ReentrancyNotAllowed', 'MaxSeedLengthExceeded',
  'InvalidSeeds', 'InvalidRealloc', 'ComputationalBudgetExceeded', 'PrivilegeEscalation',
  'ProgramEnvironmentSetupFailure', 'ProgramFailedToComplete', 'ProgramFailedToCompile', 'Immutable',
  'IncorrectAuthority', 'AccountNotRentExempt', 'InvalidAccountOwner', 'ArithmeticOverflow', 'UnsupportedSysvar',
  'IllegalOwner', 'MaxAccountsDataAllocationsExceeded', 'MaxAccountsExceeded', 'MaxInstructionTraceLengthExceeded',
  'BuiltinProgramsMustConsumeComputeUnits', 'BorshIoError',
] as const;

const TRANSACTION_MESSAGES: Record<string, string> = {
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  AlreadyProcessed: 'This transaction has already been processed',
  BlockhashNotFound: 'Blockhash not found',
  SignatureFailure: 'Transaction did not pass signature verification',
  SanitizeFailure: 'Transaction failed to sanitize accounts offsets correctly',
  ProgramAccountNotFound: 'Attempt to load a program that does not exist',
  InvalidAccountForFee: 'This account may not be used to pay transaction fees',
  MissingSignatureForFee: 'Transaction requires a fee but has no signature present',
  AccountLoadedTwice: 'Account loaded twice',
};

const INSTRUCTION_MESSAGES: Record<string, string> = {
  GenericError: 'generic instruction error',
  InvalidArgument: 'invalid program argument',
  InvalidInstructionData: 'invalid instruction data',
  InvalidAccountData: 'invalid account data for instruction',
  AccountDataTooSmall: 'account data too small for instruction',
  InsufficientFunds: 'insufficient funds for instruction',
  IncorrectProgramId: 'incorrect program id for instruction',
  MissingRequiredSignature: 'missing required signature for instruction',
  AccountAlreadyInitialized: 'instruction requires an uninitialized account',
  UninitializedAccount: 'instruction requires an initialized account',
  PrivilegeEscalation: 'Cross-program invocation with unauthorized signer or writable account',
  NotEnoughAccountKeys: 'insufficient account keys for instruction',
  ArithmeticOverflow: 'Program arithmetic overflowed',
  InvalidAccountOwner: 'Invalid account owner',
  IllegalOwner: 'Provided owner is not allowed',
  UnsupportedProgramId: 'Unsupported program id',
};

export function instructionErrorMessage(error: InstructionErrorJson): string {
  if (typeof error === 'string') return INSTRUCTION_MESSAGES[error] ?? error;
  if ('Custom' in error) return `custom program error: 0x${error.Custom.toString(16)}`;
  return `Failed to serialize or deserialize account data: ${error.BorshIoError}`;
}

export function transactionErrorMessage(error: TransactionErrorJson): string {
  if (typeof error === 'string') return TRANSACTION_MESSAGES[error] ?? error;
  if ('InstructionError' in error && Array.isArray(error.InstructionError)) {
    const [index, inner] = error.InstructionError;
    return `Error processing Instruction ${index}: ${instructionErrorMessage(inner)}`;
  }
  if ('InsufficientFundsForRent' in error) {
    const { account_index } = error.InsufficientFundsForRent as { account_index: number };
    return `Transaction results in an account (${account_index}) with insufficient funds for rent`;
  }
  return JSON.stringify(error);
}

/** Converts litesvm's native error objects into the RPC's JSON shape. */
export function fromLiteSvmError(err: unknown): TransactionErrorJson {
  if (typeof err === 'number') return TRANSACTION_ERRORS[err] ?? 'SanitizeFailure';
  const e = err as { constructor: { name: string }; index?: number; accountIndex?: number; err?: () => unknown };
  switch (e.constructor.name) {
    case 'TransactionErrorInstructionError':
      return { InstructionError: [e.index!, fromLiteSvmInstructionError(e.err!())] };
    case 'TransactionErrorDuplicateInstruction':
      return { DuplicateInstruction: e.index };
    case 'TransactionErrorInsufficientFundsForRent':
      return { InsufficientFundsForRent: { account_index: e.accountIndex } };
    case 'TransactionErrorProgramExecutionTemporarilyRestricted':
      return { ProgramExecutionTemporarilyRestricted: { account_index: e.accountIndex } };
    default:
      return 'SanitizeFailure';
  }
}

function fromLiteSvmInstructionError(err: unknown): InstructionErrorJson {
  if (typeof err === 'number') return INSTRUCTION_ERRORS[err] ?? 'GenericError';
  const e = err as { constructor: { name: string }; code?: number; msg?: string };
  if (e.constructor.name === 'InstructionErrorCustom') return { Custom: e.code! };
  return { BorshIoError: e.msg ?? '' };
}

/** A transaction refused before or during execution, with the logs produced so far. */
export class TransactionFailure extends Error {
  constructor(
    readonly error: TransactionErrorJson,
    readonly logs: string[] = [],
  ) {
    super(transactionErrorMessage(error));
  }
}
