import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '@svc/contracts';
import { ApiError } from './errors';

const JSON_MEDIA_TYPES = ['application/json', 'application/*+json'];

/**
 * Refuses a body nested past MAX_JSON_DEPTH from its raw bytes, before JSON.parse builds it: parsing a
 * body millions of levels deep holds the event loop for seconds, and anything that later walks it by
 * recursion overflows the stack.
 */
function refuseDeepNesting(_req: IncomingMessage, _res: unknown, raw: Buffer, charset: string): void {
  if (exceedsJsonDepth(charset === 'utf-8' ? raw : utf8Of(raw, charset))) {
    throw new ApiError(400, 'invalid_json', `the body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);
  }
}

/** Re-encoded as UTF-8, so that one scan serves every charset body-parser accepts (utf-16 and the like). */
function utf8Of(raw: Buffer, charset: string): Buffer {
  let text: string;
  try {
    text = new TextDecoder(charset).decode(raw);
  } catch {
    throw new ApiError(415, 'unsupported_media_type', 'send UTF-8 JSON');
  }
  return Buffer.from(text, 'utf8');
}

/**
 * The JSON body parser: body-parser's own reading (size limit, Content-Encoding, charset, strict JSON, an
 * empty body as `{}`, and the error types the error middleware maps), with the nesting check run through
 * its `verify` hook on the raw bytes. An ApiError thrown there keeps its own status.
 */
export function jsonBody(limit: string): RequestHandler {
  return express.json({ limit, strict: true, type: JSON_MEDIA_TYPES, verify: refuseDeepNesting });
}
