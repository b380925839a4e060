/** JSON-RPC 2.0 errors with Solana's codes. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  static parse(): RpcError {
    return new RpcError(-32700, 'Parse error');
  }

  static invalidRequest(): RpcError {
    return new RpcError(-32600, 'Invalid request');
  }

  static methodNotFound(): RpcError {
    return new RpcError(-32601, 'Method not found');
  }

  static invalidParams(message = 'Invalid params'): RpcError {
    return new RpcError(-32602, message);
  }

  toJSON() {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}
