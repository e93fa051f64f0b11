import type { z } from 'zod';
import type { RouteName, Routes } from '../../contract/index.js';
import type { AnyRoute, ResponseOf } from '../../contract/route.js';
import type { AuthInfo } from '../auth.js';
import type { ServiceCore } from '../service-core.js';

/** Routes a browser reaches without a key (they authenticate by a single-use state instead). */
export type PublicRouteName = 'oauthCallback';
export const PUBLIC_ROUTES: ReadonlySet<RouteName> = new Set<RouteName>(['oauthCallback'] satisfies PublicRouteName[]);

export interface HandlerInput<R extends AnyRoute, A> {
  params: z.output<R['params']>;
  body: R['serviceBody'] extends z.ZodType
    ? z.output<R['serviceBody']>
    : R['body'] extends z.ZodType
      ? z.output<R['body']>
      : undefined;
  auth: A;
  query: URLSearchParams;
  svc: ServiceCore;
}

export interface HandlerResult<R extends AnyRoute> {
  status: number;
  body: ResponseOf<R>;
  /**
   * True when the body holds a key secret: its idempotency record on disk then keeps no body, and
   * the replay body lives in memory only.
   */
  holdsSecret?: boolean;
}

export type Handler<N extends RouteName> = (
  input: HandlerInput<Routes[N], N extends PublicRouteName ? null : AuthInfo>,
) => Promise<HandlerResult<Routes[N]>> | HandlerResult<Routes[N]>;

/** One handler per contract route: a route without a handler does not compile. */
export type HandlerMap = { [N in RouteName]: Handler<N> };
