import { errorCatalog, routeKey } from '../catalog';
import { cell, code, type GuideContext } from '../markdown';

/** Every code a client can meet, with its status, meaning and the routes that answer it. */
export function errorsProse({ routes }: GuideContext): string[] {
  return [
    'Every failure is `{"ok":false,"error":{"code":"...","message":"..."}}` with the HTTP status below. `invalid_request` adds `field`; ' +
      '`daily_cap` adds `used`, `cap` and `day`; `send_failed` and `tx_failed` add `logs` (and `signature` when one exists); `internal` adds `request_id`. ' +
      'A 429 or 503 carries `Retry-After`. Retry a write only with the same `Idempotency-Key`.',
    '',
    '| Status | Code | Meaning | Answered by |',
    '|---|---|---|---|',
    ...errorCatalog(routes).map((e) => `| ${e.status} | ${code(e.code)} | ${cell(e.meaning)} | ${cell(e.where)} |`),
    `| 304 | (no body) | A conditional GET (\`If-None-Match\`) whose ETag still matches: nothing changed. | ${cell(routes.filter((route) => route.conditional).map(routeKey).join(', '))} |`,
    '',
  ];
}
