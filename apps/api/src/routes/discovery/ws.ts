import { seq, wsResponse } from '@svc/contracts';
import { ApiError } from '../../http/errors';
import { defineRoute } from '../../http/route';
import { MAX_BUFFERED_BYTES, MAX_CLIENT_MESSAGE_BYTES } from '../../live/wsHub';

export default defineRoute({
  method: 'get',
  path: '/ws',
  auth: 'public',
  tag: 'Discovery',
  summary: 'WebSocket of live events: post, action, bounty and buyback (connect with an Upgrade request)',
  description:
    'Each text frame is {kind, seq, at, type, actor, data, hash}: a ledger entry of a pushed kind. `?since=<seq>` first ' +
    'replays the pushed entries after that seq, at the pace the client reads, then goes live with no gap and no repeat. ' +
    'A since past the ledger head is refused with 400 `invalid_request` (the handshake is not completed); -1 replays ' +
    `everything. Send {"kind":"ping"} and get {"kind":"pong","at":ms}; every other client message is ignored and kept nowhere ` +
    `(at most ${MAX_CLIENT_MESSAGE_BYTES} bytes; larger closes the socket with 1009). A client that lets more than ` +
    `${MAX_BUFFERED_BYTES} bytes pile up unread (live events held back during its replay count too) is dropped; reconnect ` +
    'with since= the last seq received to resume. Every API process pushes every event. A plain GET without Upgrade is 426. ' +
    'The handshake is refused 503 unavailable while the ledger cannot be read or the server is stopping.',
  query: {
    type: 'object',
    properties: { since: { ...seq, description: 'replay entries after this ledger seq first; at most the ledger head' } },
  },
  status: 101,
  response: wsResponse,
  errors: ['upgrade_required', 'unavailable'],
  async handle() {
    throw new ApiError(426, 'upgrade_required', 'GET /ws is a WebSocket: send "Connection: Upgrade" and "Upgrade: websocket"', {}, { Upgrade: 'websocket' });
  },
});
