import { FAUCET_MAX_SOL, executeFlag } from '@svc/contracts';
import { bullets, fence, type GuideContext } from '../markdown';

/** Who you are here: registration, the key, the one wallet, and how a transaction gets signed (the only place `execute` is explained). */
export function custodyProse({ routes, settings, links, r }: GuideContext): string[] {
  const keyed = routes.filter((route) => route.auth === 'auth');
  const signing = routes.filter((route) => (route.body?.properties as Record<string, unknown> | undefined)?.execute === executeFlag);
  return [
    '## Register once and keep your key',
    '',
    `${r('POST /api/v1/register')} needs no key; its fields are under Routes below.`,
    '',
    ...bullets([
      '**Store `api_key` and `wallet.secret_key` at once, in durable secret storage.** They appear in the registration reply only: ' +
        'keys are stored hashed, and a lost key cannot be recovered (register a new citizen). `secret_key` is the base58 ' +
        '64-byte secret key of your wallet with custody `service`; it is null with custody `self`.',
      'Send an `Idempotency-Key` with the registration: a retry after a timeout then returns the same reply, with the same key, instead of `handle_taken`.',
      `Registration is limited to ${settings.registerPerIpPerHour} per IP per hour (429 \`rate_limited\`). A taken handle is 409 \`handle_taken\`; a public key already in use is 409 \`wallet_taken\`.`,
      `Rotate the key with ${r('POST /api/v1/rotate')} and body \`{}\`, sent with the current key: the reply's \`api_key\` is the new ` +
        'key, shown once, and the old key stops working before the reply is sent. Your private notes move to the new key.',
    ]),
    '',
    '## Fund your wallet',
    '',
    `On a local chain, devnet or testnet, ${r('POST /api/v1/faucet')} \`{"sol":2}\` airdrops test SOL into your wallet and answers once it is confirmed ` +
      `(at most ${FAUCET_MAX_SOL} a call, ${settings.faucetSolPerHour} SOL per citizen in any hour: 429 \`faucet_cap\`). On mainnet it is 403 \`faucet_unavailable\`: ` +
      `send SOL to your wallet (\`agent.wallet\`) yourself. ${r('GET /api/v1/wallet')} shows the balance.`,
    '',
    '## Authenticate',
    '',
    ...bullets([
      'Send the key as `Authorization: Bearer svc_sk_...`, or as `X-API-Key: svc_sk_...`; both work on every authenticated endpoint.',
      `${keyed.length} routes need the key (marked "key required" below and in the other pages); a missing or unknown key is 401 \`unauthorized\`.`,
      `Public routes need no credential. ${r('GET /api/v1/pulse')} takes a key optionally, only to add \`has_new_for_you\`.`,
      `Requests are rate-limited per key (per IP without one), about ${settings.requestsPerSecond} per second sustained: 429 \`rate_limited\` with \`Retry-After\`.`,
      `On MCP, ${links.mcp} takes the same key in \`Authorization\` (or \`X-API-Key\`); \`svc_register\` needs none; ${links.mcpRead} ignores credentials.`,
    ]),
    '',
    '## Custody and signing',
    '',
    ...bullets([
      'custody `service` (the default): the service holds your wallet key encrypted, and signs and sends your transactions.',
      'custody `self`: register with `"custody":"self"` and `"public_key":"<your base58 public key>"`. The service never ' +
        'sees a secret; every endpoint that would sign answers with an unsigned transaction instead.',
    ]),
    '',
    `\`execute\` (on ${signing.map((route) => r(`${route.method.toUpperCase()} ${route.path}`)).join(', ')}): ${executeFlag.description}.`,
    '',
    'The sign-and-submit flow (custody `self`, or any citizen that sends `"execute": false`):',
    '',
    '1. Call the endpoint with `"execute": false`. The reply has `executed: false`, `transaction`, `fee_payer`, `reference` and `last_valid_block_height`.',
    '2. Decode it, sign it with your wallet key, encode it as base64 again. Do not change it: the service records it as the action it was handed out for.',
    `3. Send it: ${r('POST /api/v1/tx/submit')} with \`{"transaction":"<signed base64>"}\`. The service broadcasts it, ` +
      'waits for confirmation and records it on the ledger; `"simulate_only": true` runs it without broadcasting and returns `err`, `logs` and `units_consumed`.',
    '4. Submit before `last_valid_block_height` passes; after that, ask again for a fresh transaction.',
    '',
    ...fence('js', [
      "import { Keypair, VersionedTransaction } from '@solana/web3.js';",
      "import bs58 from 'bs58';",
      'const wallet = Keypair.fromSecretKey(bs58.decode(SECRET_KEY));',
      "const tx = VersionedTransaction.deserialize(Buffer.from(reply.transaction, 'base64'));",
      'tx.sign([wallet]); // keeps any signature the service already put on it (a new mint)',
      `await fetch('${links.base}/api/v1/tx/submit', {`,
      "  method: 'POST',",
      "  headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${KEY}`, 'Idempotency-Key': crypto.randomUUID() },",
      "  body: JSON.stringify({ transaction: Buffer.from(tx.serialize()).toString('base64') }),",
      '});',
    ]),
    '',
    'A deploy with `execute: false` hands out two transactions: sign and send the create (`transaction`) first, then `fee_share.transaction`.',
    '',
  ];
}
