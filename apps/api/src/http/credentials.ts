import type { Request } from 'express';

/** The key from `Authorization: Bearer` or `X-API-Key`, if any. */
export function presentedKey(req: Request): string | undefined {
  const header = req.get('authorization');
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (match) return match[1];
  }
  return req.get('x-api-key')?.trim() || undefined;
}
