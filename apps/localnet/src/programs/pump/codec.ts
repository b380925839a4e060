import { PublicKey } from '@solana/web3.js';
import { pumpIdl } from '@pump-fun/pump-sdk';

/**
 * Borsh over the pump IDL the SDK ships, so every layout the emulator writes is the one the SDK decodes.
 * Values are plain: camelCase keys, bigint for 64/128-bit integers, number below, PublicKey, string,
 * arrays, `null` for a none option, a variant name for a unit enum and an array for a tuple struct.
 * Anchor's coder caps encodes at 1,000 bytes (Global is 1,087) and speaks BN; this one does neither.
 */

type IdlType =
  | string
  | { defined: { name: string } }
  | { array: [IdlType, number] }
  | { vec: IdlType }
  | { option: IdlType };
type IdlField = { name: string; type: IdlType };
type IdlTypeDef = {
  name: string;
  type: { kind: 'struct'; fields?: (IdlField | IdlType)[] } | { kind: 'enum'; variants: { name: string }[] };
};
interface IdlInstruction {
  name: string;
  discriminator: number[];
  accounts: { name: string; writable?: boolean; signer?: boolean; address?: string }[];
  args: IdlField[];
}
interface Idl {
  address: string;
  instructions: IdlInstruction[];
  accounts: { name: string; discriminator: number[] }[];
  events: { name: string; discriminator: number[] }[];
  errors: { code: number; name: string; msg?: string }[];
  types: IdlTypeDef[];
}

export const IDL = pumpIdl as unknown as Idl;

const typeDefs = new Map(IDL.types.map((t) => [t.name, t]));

export const camel = (snake: string): string => snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

class Writer {
  private readonly chunks: Buffer[] = [];

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  int(bytes: number, value: bigint | number, signed = false): void {
    const chunk = Buffer.alloc(bytes);
    let v = BigInt(value);
    if (signed && v < 0n) v += 1n << BigInt(bytes * 8);
    if (v < 0n || v >= 1n << BigInt(bytes * 8)) throw new RangeError(`${value} does not fit ${bytes} bytes`);
    for (let i = 0; i < bytes; i++) {
      chunk[i] = Number(v & 0xffn);
      v >>= 8n;
    }
    this.push(chunk);
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

export class Reader {
  offset = 0;
  constructor(readonly data: Buffer) {}

  get remaining(): number {
    return this.data.length - this.offset;
  }

  take(bytes: number): Buffer {
    if (this.offset + bytes > this.data.length) throw new RangeError('borsh: out of data');
    const chunk = this.data.subarray(this.offset, this.offset + bytes);
    this.offset += bytes;
    return chunk;
  }

  int(bytes: number, signed = false): bigint {
    const chunk = this.take(bytes);
    let v = 0n;
    for (let i = bytes - 1; i >= 0; i--) v = (v << 8n) | BigInt(chunk[i]);
    if (signed && chunk[bytes - 1] & 0x80) v -= 1n << BigInt(bytes * 8);
    return v;
  }
}

const SMALL_INTS: Record<string, number> = { u8: 1, u16: 2, u32: 4 };
const WIDE_INTS: Record<string, [number, boolean]> = { u64: [8, false], i64: [8, true], u128: [16, false] };

function encodeValue(w: Writer, type: IdlType, value: unknown): void {
  if (typeof type === 'string') {
    if (type in SMALL_INTS) return w.int(SMALL_INTS[type], value as number);
    if (type in WIDE_INTS) return w.int(WIDE_INTS[type][0], value as bigint, WIDE_INTS[type][1]);
    if (type === 'bool') return w.int(1, value ? 1 : 0);
    if (type === 'pubkey') return w.push((value as PublicKey).toBuffer());
    if (type === 'string') {
      const bytes = Buffer.from(value as string, 'utf8');
      w.int(4, bytes.length);
      return w.push(bytes);
    }
    throw new Error(`codec: unsupported type ${type}`);
  }
  if ('array' in type) {
    const items = value as unknown[];
    if (items.length !== type.array[1]) throw new RangeError(`codec: array needs ${type.array[1]} items`);
    return items.forEach((item) => encodeValue(w, type.array[0], item));
  }
  if ('vec' in type) {
    const items = value as unknown[];
    w.int(4, items.length);
    return items.forEach((item) => encodeValue(w, type.vec, item));
  }
  if ('option' in type) {
    if (value === null || value === undefined) return w.int(1, 0);
    w.int(1, 1);
    return encodeValue(w, type.option, value);
  }
  const def = typeDefs.get(type.defined.name);
  if (!def) throw new Error(`codec: unknown type ${type.defined.name}`);
  if (def.type.kind === 'enum') {
    const index = def.type.variants.findIndex((v) => v.name === value);
    if (index < 0) throw new Error(`codec: ${String(value)} is no variant of ${def.name}`);
    return w.int(1, index);
  }
  const fields = def.type.fields ?? [];
  fields.forEach((field, i) => {
    if (isNamed(field)) encodeValue(w, field.type, (value as Record<string, unknown>)[camel(field.name)]);
    else encodeValue(w, field, (value as unknown[])[i]);
  });
}

function decodeValue(r: Reader, type: IdlType): unknown {
  if (typeof type === 'string') {
    if (type in SMALL_INTS) return Number(r.int(SMALL_INTS[type]));
    if (type in WIDE_INTS) return r.int(WIDE_INTS[type][0], WIDE_INTS[type][1]);
    if (type === 'bool') return r.int(1) !== 0n;
    if (type === 'pubkey') return new PublicKey(r.take(32));
    if (type === 'string') return r.take(Number(r.int(4))).toString('utf8');
    throw new Error(`codec: unsupported type ${type}`);
  }
  if ('array' in type) return Array.from({ length: type.array[1] }, () => decodeValue(r, type.array[0]));
  if ('vec' in type) return Array.from({ length: Number(r.int(4)) }, () => decodeValue(r, type.vec));
  if ('option' in type) return r.int(1) === 0n ? null : decodeValue(r, type.option);
  const def = typeDefs.get(type.defined.name);
  if (!def) throw new Error(`codec: unknown type ${type.defined.name}`);
  if (def.type.kind === 'enum') {
    const variant = def.type.variants[Number(r.int(1))];
    if (!variant) throw new RangeError(`codec: bad ${def.name} variant`);
    return variant.name;
  }
  const fields = def.type.fields ?? [];
  if (fields.length > 0 && !isNamed(fields[0])) return fields.map((field) => decodeValue(r, field as IdlType));
  return Object.fromEntries(fields.map((field) => [camel((field as IdlField).name), decodeValue(r, (field as IdlField).type)]));
}

const isNamed = (field: IdlField | IdlType): field is IdlField => typeof field === 'object' && 'name' in field && 'type' in field;

/** Borsh body of an IDL type (no discriminator). */
export function encodeType(name: string, value: unknown): Buffer {
  const w = new Writer();
  encodeValue(w, { defined: { name } }, value);
  return w.toBuffer();
}

/** Decodes an IDL type from the front of `data`; bytes after it are ignored, as the program's reader does. */
export function decodeType<T>(name: string, data: Buffer): T {
  return decodeValue(new Reader(data), { defined: { name } }) as T;
}

function discriminatorOf(list: { name: string; discriminator: number[] }[], name: string): Buffer {
  const entry = list.find((e) => e.name === name);
  if (!entry) throw new Error(`pump IDL has no ${name}`);
  return Buffer.from(entry.discriminator);
}

export const accountDiscriminator = (name: string): Buffer => discriminatorOf(IDL.accounts, name);
export const eventDiscriminator = (name: string): Buffer => discriminatorOf(IDL.events, name);

/** Discriminator + borsh body of an account type. */
export const encodeAccount = (name: string, value: unknown): Buffer => Buffer.concat([accountDiscriminator(name), encodeType(name, value)]);

/** Discriminator + borsh body of an event, as `emit!` writes it. */
export const encodeEvent = (name: string, value: unknown): Buffer => Buffer.concat([eventDiscriminator(name), encodeType(name, value)]);

export function instruction(name: string): IdlInstruction {
  const entry = IDL.instructions.find((i) => i.name === name);
  if (!entry) throw new Error(`pump IDL has no instruction ${name}`);
  return entry;
}

/** Anchor instruction data: discriminator + borsh args. */
export function encodeInstructionData(name: string, args: Record<string, unknown>): Buffer {
  const ix = instruction(name);
  const w = new Writer();
  for (const arg of ix.args) encodeValue(w, arg.type, args[camel(arg.name)]);
  return Buffer.concat([Buffer.from(ix.discriminator), w.toBuffer()]);
}

// The program reads these trailing arguments EOF-tolerantly: an older client that leaves them off gets the default.
const TRAILING_DEFAULTS: Record<string, unknown> = { OptionBool: [false], OptionU64: [0n] };

/** Decodes instruction args after the discriminator; null when they do not deserialize. */
export function decodeInstructionArgs<T>(name: string, body: Buffer): T | null {
  const r = new Reader(body);
  const args: Record<string, unknown> = {};
  try {
    for (const arg of instruction(name).args) {
      const defined = typeof arg.type === 'object' && 'defined' in arg.type ? arg.type.defined.name : null;
      args[camel(arg.name)] = r.remaining === 0 && defined && defined in TRAILING_DEFAULTS ? TRAILING_DEFAULTS[defined] : decodeValue(r, arg.type);
    }
  } catch {
    return null;
  }
  return args as T;
}
