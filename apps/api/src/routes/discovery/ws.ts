import { wsResponse } from '@svc/contracts';
import { ApiError } from '../../http/errors';
import { defineRoute } from '../../http/route';
import { MAX_BUFFERED_BYTES, MAX_CLIENT_MESSAGE_BYTES } from '../../live/wsHub';

export default defineRoute<unknown, { since?: number }>({
  method: 'get',
  path: '/ws',
  auth: 'public',
  tag: 'Discovery',
  summary: 'WebSocket of live events: post, action, bounty and buyback (connect with an Upgrade request)',
  description:
    'Each text frame is {kind, seq, at, type, actor, data, hash}: a ledger entry of a pushed kind. `?since=<seq>` first ' +
    'replays the pushed entries after that seq, then goes live with no gap and no repeat. Send {"kind":"ping"} and get ' +
    `{"kind":"pong","at":ms}; every other client message is ignored and kept nowhere (at most ${MAX_CLIENT_MESSAGE_BYTES} bytes; ` +
    `larger closes the socket with 1009). A client that lets more than ${MAX_BUFFERED_BYTES} bytes pile up unread is dropped; ` +
    'reconnect with since= to resume. Every API process pushes every event. A plain GET without Upgrade is 426.',
  query: { type: 'object', properties: { since: { type: 'integer', minimum: -1, description: 'replay entries after this ledger seq first' } } },
  response: wsResponse,
  errors: ['upgrade_required'],
  async handle() {
    throw new ApiError(426, 'upgrade_required', 'GET /ws is a WebSocket: send "Connection: Upgrade" and "Upgrade: websocket"', {}, { Upgrade: 'websocket' });
  },
});
