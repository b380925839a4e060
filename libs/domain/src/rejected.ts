/**
 * A command refused for a reason the caller can act on. Commands throw it (or a decider returns its
 * shape); only a transport (HTTP, MCP) turns `code` into a status, so every transport calls the same
 * commands. `retryAfterSeconds` marks a refusal that may pass later (an unreachable chain).
 */
export class Rejected extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'Rejected';
  }

  static of(rejection: { code: string; message: string; details?: Record<string, unknown> }): Rejected {
    return new Rejected(rejection.code, rejection.message, rejection.details ?? {});
  }
}
