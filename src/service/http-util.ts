import type { IncomingMessage } from 'node:http';
import type * as z from 'zod/mini';
import type { FieldError } from '../contract/common.js';
import { safeParseJson } from '../contract/json-keys.js';
import { HttpError } from './errors.js';

/** A body in parts is sent as their concatenation. */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string | string[];
}

const JSON_HEADERS: Record<string, string> = {
  'Content-Type': 'application/json; charset=utf-8',
  'Cache-Control': 'no-store',
};

export function jsonReply(status: number, body: string | string[], headers: Record<string, string> = {}): Reply {
  return { status, headers: { ...JSON_HEADERS, ...headers }, body };
}

/** The client went away before its request was complete: no one to answer. */
export class ClientGone extends Error {}

/**
 * The whole request body, refused (413) as soon as it passes `limit` bytes (before reading, on the Content-Length).
 * `reserve` is told the bytes to come (the Content-Length at once, else each chunk) and may refuse by throwing.
 */
export function readBody(req: IncomingMessage, limit: number, reserve?: (bytes: number) => void): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  const known = req.headers['content-length'] !== undefined && Number.isFinite(declared);
  return new Promise((resolve, reject) => {
    if (known && declared > limit) throw tooLarge(limit);
    if (known) reserve?.(declared);
    const chunks: Buffer[] = [];
    // A declared length is read into one buffer as it arrives: no second copy to join the chunks.
    const whole = known && declared > 0 ? Buffer.allocUnsafe(declared) : null;
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const refuse = (error: unknown) => {
      cleanup();
      req.pause();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return refuse(tooLarge(limit));
      try {
        if (!known) reserve?.(chunk.length);
      } catch (error) {
        return refuse(error);
      }
      if (whole) chunk.copy(whole, size - chunk.length);
      else chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (whole) resolve(whole.subarray(0, size));
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    // A stream that failed or closed has nothing more to read: pausing it changes nothing.
    const onError = () => refuse(new ClientGone('request stream failed'));
    const onClose = () => req.complete || refuse(new ClientGone('client closed the connection mid-request'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

const tooLarge = (limit: number) =>
  new HttpError(413, 'payload_too_large', `the request body is larger than the limit of ${limit} bytes`);

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** An empty body counts as `{}` (all defaults); anything else must be JSON in UTF-8 (400 `invalid_json`). */
export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) return {};
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw new HttpError(400, 'invalid_json', 'the request body is not valid UTF-8');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, 'invalid_json', `the request body is not valid JSON: ${(error as Error).message}`);
  }
  // A \uD800-\uDFFF escape standing alone is no character: stored as UTF-8 it would come back as U+FFFD.
  checkDepth(value, text.includes('\\u') && /\\u[dD][89a-fA-F]/.test(text));
  return value;
}

/** Deeper arrays and objects (the body is level 1) are refused, 422: docs/local-service-choices.md, HTTP. */
export const MAX_JSON_DEPTH = 64;

// Without recursion, so any depth JSON.parse accepted is checked safely.
function checkDepth(value: unknown, surrogates: boolean): void {
  if (surrogates && lone(value)) throw loneSurrogate();
  if (value === null || typeof value !== 'object') return;
  const stack: [object, number][] = [[value, 1]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, depth] = next;
    if (depth > MAX_JSON_DEPTH) {
      throw new HttpError(422, 'validation_error', [
        {
          loc: ['body'],
          msg: `arrays and objects are nested more than ${MAX_JSON_DEPTH} levels deep`,
          type: 'too_deep',
        },
      ]);
    }
    for (const child of Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
      else if (surrogates && lone(child)) throw loneSurrogate();
    }
  }
}

const lone = (value: unknown): boolean => typeof value === 'string' && !value.isWellFormed();

const loneSurrogate = () =>
  new HttpError(
    400,
    'invalid_json',
    'the request body holds a lone surrogate (a \\uD800-\\uDFFF escape that is no character)',
  );

/** Validates with a contract schema; 422 `validation_error` with one `{loc, msg, type}` per problem. */
export function validate<S extends z.ZodMiniType>(schema: S, value: unknown, where: 'body' | 'path'): z.output<S> {
  const result = safeParseJson(schema, value);
  if (result.success) return result.data;
  const detail: FieldError[] = result.error.issues.map((issue) => ({
    loc: [where, ...issue.path.map((p) => (typeof p === 'number' ? p : String(p)))],
    msg: issue.message,
    type: issue.code,
  }));
  throw new HttpError(422, 'validation_error', detail);
}
