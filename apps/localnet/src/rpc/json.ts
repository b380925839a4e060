/**
 * JSON text of an RPC reply. An account's rentEpoch is u64::MAX, which a JavaScript number cannot hold
 * (it would print as 18446744073709552000, not a u64 to Rust or Python clients); it is written exactly.
 */
export function rpcJson(value: unknown): string {
  return JSON.stringify(value).replace(/"rentEpoch":18446744073709552000/g, '"rentEpoch":18446744073709551615');
}
