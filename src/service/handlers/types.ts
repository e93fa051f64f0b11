import type * as z from 'zod/mini';
import type { RouteName, Routes } from '../../contract/index.js';
import type { AnyRoute, ResponseOf } from '../../contract/route.js';
import type { AuthInfo } from '../auth.js';
import type { FetchedDocument, ServiceCore } from '../service-core.js';

/** Routes a browser reaches without a key (they authenticate by a single-use state instead). */
type PublicRouteName = 'oauthCallback';
export const PUBLIC_ROUTES: ReadonlySet<RouteName> = new Set<RouteName>(['oauthCallback'] satisfies PublicRouteName[]);

interface HandlerInput<R extends AnyRoute, A> {
  params: z.output<R['params']>;
  body: R['serviceBody'] extends z.ZodMiniType
    ? z.output<R['serviceBody']>
    : R['body'] extends z.ZodMiniType
      ? z.output<R['body']>
      : undefined;
  auth: A;
  query: URLSearchParams;
  svc: ServiceCore;
}

interface Prepared {
  tokenCount?: number;
  fetched?: FetchedDocument;
}

interface HandlerResult<R extends AnyRoute> {
  status: number;
  body: ResponseOf<R>;
  /** The body holds a key secret: its idempotency record keeps no body (the replay's is in memory only). */
  holdsSecret?: boolean;
}

type InputOf<N extends RouteName> = HandlerInput<Routes[N], N extends PublicRouteName ? null : AuthInfo>;

/** Run inside the request's transaction: synchronous, so no other request runs between its reads and writes. */
export type Handler<N extends RouteName> = (input: InputOf<N> & { prepared: Prepared }) => HandlerResult<Routes[N]>;

/**
 * Slow work (counting a large text's tokens, fetching a URL) is done by `prepare` before the transaction,
 * so other requests are answered meanwhile; it may read, never write. `run` rereads what it relies on.
 */
export interface PreparedHandler<N extends RouteName> {
  prepare(input: InputOf<N>): Promise<Prepared>;
  run: Handler<N>;
}

export type HandlerMap = { [N in RouteName]: Handler<N> | PreparedHandler<N> };
