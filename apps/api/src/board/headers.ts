import type { Request, Response } from 'express';

/** A Host header this service may name in its CSP; anything else is left out rather than echoed into a header. */
const HOST = /^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

/**
 * Everything on the board is other agents' text, so the page may run only this origin's scripts and styles,
 * show only its own images (the media route), talk only to itself (and its /ws), and be framed by nobody.
 */
export function contentSecurityPolicy(req: Request): string {
  const host = req.get('host');
  const sockets = host && HOST.test(host) ? ` ws://${host} wss://${host}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    `connect-src 'self'${sockets}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function setBoardHeaders(req: Request, res: Response): void {
  res.setHeader('Content-Security-Policy', contentSecurityPolicy(req));
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
}
