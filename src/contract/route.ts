import type * as z from 'zod/mini';
import { UsageError } from '../errors.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * One endpoint of the interface. The CLI's client validates requests and responses against it, the
 * local service dispatches on it, and `facectl openapi` is generated from it.
 */
export interface Route<
  Name extends string = string,
  Params extends z.ZodMiniType = z.ZodMiniType,
  Body extends z.ZodMiniType | undefined = z.ZodMiniType | undefined,
  Response extends z.ZodMiniType = z.ZodMiniType,
  ServiceBody extends z.ZodMiniType | undefined = z.ZodMiniType | undefined,
> {
  readonly name: Name;
  readonly method: HttpMethod;
  /** Path template relative to the base URL, with `{param}` placeholders. */
  readonly path: string;
  readonly summary: string;
  readonly params: Params;
  /** What the seed states about the request body: checked by the client and by the service. */
  readonly body: Body;
  /** The local service's own rules for the body, checked by `facectl serve` only, in place of `body`. */
  readonly serviceBody: ServiceBody;
  readonly response: Response;
  /** True for endpoints the published interface does not show (local-service.md, "Extensions"). */
  readonly extension: boolean;
  /** POSTs that create or charge something: sent with an Idempotency-Key, which makes retrying them safe. */
  readonly idempotent: boolean;
  /** The scope a key needs (local-service.md): `<area>:<action>`; null for the browser callback. */
  readonly scope: `${'keys' | 'faces' | 'compile' | 'oauth'}:${'read' | 'write'}` | null;
  /** `html` for the browser-facing callback; everything else answers JSON. */
  readonly responseKind: 'json' | 'html';
  /** The seed leaves success codes "not shown": the local service's (docs/local-service-choices.md). */
  readonly successStatus: 200 | 201;
}

/** A route of any name and schemas (Route's defaults). */
export type AnyRoute = Route;
export type ParamsOf<R extends AnyRoute> = z.input<R['params']>;
export type BodyOf<R extends AnyRoute> = R['body'] extends z.ZodMiniType ? z.input<R['body']> : undefined;
export type ResponseOf<R extends AnyRoute> = z.output<R['response']>;

type Defaulted = 'body' | 'extension' | 'idempotent' | 'responseKind' | 'serviceBody' | 'successStatus';

export function defineRoute<
  const Name extends string,
  Params extends z.ZodMiniType,
  Body extends z.ZodMiniType | undefined = undefined,
  Response extends z.ZodMiniType = z.ZodMiniType,
  ServiceBody extends z.ZodMiniType | undefined = undefined,
>(
  def: Omit<Route<Name, Params, Body, Response, ServiceBody>, Defaulted> &
    Partial<Pick<Route<Name, Params, Body, Response, ServiceBody>, Defaulted>>,
): Route<Name, Params, Body, Response, ServiceBody> {
  return {
    extension: false,
    idempotent: false,
    responseKind: 'json',
    successStatus: 200,
    body: undefined as Body,
    serviceBody: undefined as ServiceBody,
    ...def,
  };
}

/** The names of a path template's placeholders, in order. */
export function pathParamNames(template: string): string[] {
  return [...template.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1] as string);
}

/**
 * Refuses a path parameter no URL can carry: '.' and '..' are steps of the path to a URL parser, and so
 * are %2e and %2e%2e; sent, they would address another endpoint. `name` is the argument's (`<thread_id>`).
 */
export function refuseDotSegment(name: string, value: string): void {
  if (value !== '.' && value !== '..') return;
  throw new UsageError(`<${name}>: '${value}' cannot be sent as a path segment`, {
    code: 'invalid_request',
    hint: `a URL reads '${value}' (even percent-encoded) as a step of its path, which would address another endpoint; nothing was sent`,
  });
}

/** Fills a path template; every value is percent-encoded so an id can never change the path. */
export function buildPath(template: string, params: Record<string, unknown>): string {
  // A path without parameters (a batch's every request) is not run through the pattern.
  if (!template.includes('{')) return template;
  return template.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (typeof value !== 'string' || value.length === 0) throw new TypeError(`missing path parameter ${name}`);
    refuseDotSegment(name, value);
    return encodeURIComponent(value);
  });
}

/** The decoded parameters of a concrete path, or null when it does not fit the template. */
export function matchPath(template: string, path: string): Record<string, string> | null {
  const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[a-z_]+\}/g, '([^/]+)')}$`);
  const match = pattern.exec(path);
  if (!match) return null;
  try {
    return Object.fromEntries(
      pathParamNames(template).map((name, i) => [name, decodeURIComponent(match[i + 1] as string)]),
    );
  } catch {
    return null;
  }
}
