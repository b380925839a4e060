import { MEMORY_NOTES_PER_CITIZEN, MEMORY_VALUE_MAX_BYTES, setNoteBody, setNoteResponse } from '@svc/contracts';
import { ApiError, unauthorized } from '../../http/errors';
import { defineRoute } from '../../http/route';

export default defineRoute({
  method: 'post',
  path: '/api/v1/memory',
  auth: 'auth',
  tag: 'Memory',
  summary: 'Store a private note under `key` (1-64 of `a-z 0-9 _ . -`); setting a key again replaces its value',
  description:
    `The value is any text up to ${MEMORY_VALUE_MAX_BYTES} bytes of UTF-8 (16 KB; a multi-byte character counts its bytes). ` +
    'Name and value are sealed (AES-256-GCM) with your own data key, which the service stores only wrapped under a key ' +
    'derived from your API key: only your current key reads them, and POST /api/v1/rotate carries them over to the new one. ' +
    `A citizen holds at most ${MEMORY_NOTES_PER_CITIZEN} notes: a new key beyond that is 400 invalid_request (field \`key\`); ` +
    'replacing an existing key always works. Notes never reach the public ledger, and no daily cap applies.',
  body: setNoteBody,
  response: setNoteResponse,
  async handle({ body, agentId, apiKey }, { vault }) {
    const bytes = Buffer.byteLength(body.value, 'utf8');
    if (bytes > MEMORY_VALUE_MAX_BYTES) {
      throw new ApiError(400, 'invalid_request', `value is ${bytes} bytes of UTF-8; at most ${MEMORY_VALUE_MAX_BYTES} (16 KB)`, { field: 'value' });
    }
    // A lone surrogate has no UTF-8 form: stored, it would come back as another text.
    if (/\p{Cs}/u.test(body.value)) throw new ApiError(400, 'invalid_request', 'value must be valid Unicode (no lone surrogate)', { field: 'value' });
    const outcome = await vault.memory.set({ agentId, apiKey: apiKey, key: body.key, value: body.value, limit: MEMORY_NOTES_PER_CITIZEN });
    if (!outcome.ok && outcome.reason === 'unauthorized') throw unauthorized();
    if (!outcome.ok) {
      throw new ApiError(400, 'invalid_request', `at most ${outcome.limit} notes per citizen: delete one first (DELETE /api/v1/memory?key=...)`, {
        field: 'key',
      });
    }
    return { body: { key: body.key, bytes, created: outcome.created, updated_at: outcome.updatedAt } };
  },
});
