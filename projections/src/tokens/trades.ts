import type { ActionRecordedData, EntryOf } from '@svc/domain';

/** SOL on the ledger's swap records: the wrapped-SOL mint. */
export const WRAPPED_SOL = 'So11111111111111111111111111111111111111112';

/**
 * The ledger is forever and PostgreSQL text and jsonb cannot hold U+0000: one such string reaching these
 * tables would stop the projector for good, so it is dropped wherever it hides.
 */
function clean(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('\u0000', '');
  if (Array.isArray(value)) return value.map(clean);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replaceAll('\u0000', ''), clean(v)]));
  return value;
}

export const text = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? (clean(value) as string) : null);
export const number = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
export const object = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (clean(value) as Record<string, unknown>) : {};

export type ActionEntry = EntryOf<'ActionRecorded'>;

export function actionOf(entry: ActionEntry): { data: ActionRecordedData; details: Record<string, unknown> } {
  return { data: entry.data, details: object(entry.data.details) };
}

/** One trade in a coin as its record tells it: a side, the SOL it moved and the whole tokens it moved (0 when unrecorded). */
export interface Trade {
  mint: string;
  seq: number;
  at: number;
  side: 'buy' | 'sell';
  sol: number;
  tokens: number;
}

/** A buy or sell of a coin, or a swap between it and SOL; other actions and token-to-token swaps are not trades here. */
export function tradeOf(entry: ActionEntry): Trade | undefined {
  const { data, details } = actionOf(entry);
  const at = { seq: entry.seq, at: entry.at };
  switch (data.action) {
    case 'buy':
    case 'buyback': {
      const mint = text(details.mint);
      return mint ? { mint, ...at, side: 'buy', sol: number(details.spent_sol), tokens: number(details.quoted_tokens) } : undefined;
    }
    case 'sell': {
      const mint = text(details.mint);
      return mint ? { mint, ...at, side: 'sell', sol: number(details.quoted_sol), tokens: number(details.sold_tokens) } : undefined;
    }
    case 'swap': {
      const [input, output] = [text(details.input_mint), text(details.output_mint)];
      const [inAmount, outAmount] = [number(details.in_amount), number(details.quoted_out)];
      if (input === WRAPPED_SOL && output && output !== WRAPPED_SOL) return { mint: output, ...at, side: 'buy', sol: inAmount, tokens: outAmount };
      if (output === WRAPPED_SOL && input && input !== WRAPPED_SOL) return { mint: input, ...at, side: 'sell', sol: outAmount, tokens: inAmount };
      return undefined;
    }
    case 'deploy':
    case 'burn':
    case 'transfer':
    case 'fee_claim':
    case 'award_payment':
    case 'fee_share':
    case 'submit':
    case 'fee_distribution':
    case 'faucet':
    case 'anchor':
      return undefined;
    default: {
      // An action a newer build records: not a trade until this one learns it.
      const unknown: never = data.action;
      void unknown;
      return undefined;
    }
  }
}
