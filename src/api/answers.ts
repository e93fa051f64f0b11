import type * as z from 'zod';
import type { RouteName } from '../contract/index.js';
import { keepJsonKeys, safeParseJson } from '../contract/json-keys.js';
import type { AnyRoute } from '../contract/route.js';

/**
 * How the client reads an answer. The contract's response schemas state the interface strictly (the
 * local service answers by them, the conformance tests check them). A command reads an answer more
 * leniently, as derived here from those schemas: a field that is null, missing or of another type does
 * not fail the command unless the command needs it to do its job; it is read as absent (a null stays
 * null, so --json shows what came), and --debug says what deviated. The fields a command needs are
 * listed in NEEDED; an answer without one of them is an unexpected response (exit 1) naming the route
 * and the field. An answer as the interface says is read here; only one that deviates loads lenient.ts.
 *
 * Imported through client.ts only (which re-exports readAnswer): the build then keeps it in the client's
 * chunk, and an API command loads no file more for it.
 */

/**
 * The fields commands must have, by route: the new key's secret, the ids a command prints for the
 * next command to take (a document's or a thread's id, a face's alias), the URL to approve a
 * connection at, and what `oauth connect`/`disconnect` decide by (each entry's provider and whether it
 * is connected). For a route answering a list they are the fields of each entry. A submitted
 * document's token_count too, for now: a batch keeps it in its journal and its report, which take a
 * number (commands/docs/submit-batch.ts, state/batch-journal.ts).
 */
export const NEEDED = {
  createApiKey: ['key'],
  createFace: ['alias'],
  getFace: ['alias'],
  createDocument: ['document_id', 'token_count'],
  importIntoFace: ['document_id'],
  createThread: ['thread_id'],
  authorizeOAuth: ['authorize_url'],
  listOAuthConnections: ['provider', 'connected'],
} as const satisfies Partial<Record<RouteName, readonly string[]>>;

/** A value as read where no field is needed: every field of an object may be absent or null, at any depth. */
export type Lenient<T> = T extends readonly (infer E)[]
  ? Lenient<E>[]
  : T extends object
    ? { [K in keyof T]?: Lenient<T[K]> | null }
    : T;

/** An answer as read: the fields named in N are there, of their type; every other field is lenient. */
export type Answer<T, N extends PropertyKey> = T extends readonly (infer E)[]
  ? Answer<E, N>[]
  : T extends object
    ? { [K in keyof T as K extends N ? K : never]-?: NonNullable<T[K]> } & {
        [K in keyof T as K extends N ? never : K]?: Lenient<T[K]> | null;
      }
    : T;

type NeedOf<R extends AnyRoute> = R['name'] extends keyof typeof NEEDED ? (typeof NEEDED)[R['name']][number] : never;

/** What `call(route)` gives a command. */
export type AnswerOf<R extends AnyRoute> = Answer<z.output<R['response']>, NeedOf<R>>;

/**
 * A JSON answer read as above; `debug` hears each field that deviated. The strict schema is tried
 * first: an answer as the interface says, with the fields the route needs, is read by it alone.
 */
export async function readAnswer(route: AnyRoute, json: unknown, debug?: (line: string) => void): Promise<unknown> {
  const needed: readonly string[] = (NEEDED as Partial<Record<string, readonly string[]>>)[route.name] ?? [];
  const strict = safeParseJson(route.response, json);
  if (strict.success && hasNeeded(strict.data, needed)) return strict.data;
  const { readLeniently } = await import('./lenient.js');
  return keepJsonKeys(json, readLeniently(route, json, needed, strict.success ? [] : strict.error.issues, debug));
}

function hasNeeded(data: unknown, needed: readonly string[]): boolean {
  if (needed.length === 0) return true;
  const entries = Array.isArray(data) ? data : [data];
  return entries.every((entry) => needed.every((key) => (entry as Record<string, unknown>)[key] !== undefined));
}
