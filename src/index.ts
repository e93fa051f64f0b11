/**
 * The library face of facectl: a typed client with a method per route, on the CLI's contract and HTTP layer
 * (validation, retries, idempotency keys, timeouts, proxies), plus the contract itself (docs/development.md).
 */
import { type ApiClientOptions, createApiClient } from './api/client.js';
import { type ApiClient, type CallOptions, DEFAULT_BASE_URL } from './api/types.js';
import { type RouteName, type Routes, routes } from './contract/index.js';
import type { AnswerOf } from './api/answers.js';
import { type AnyRoute, type BodyOf, type ParamsOf, pathParamNames } from './contract/route.js';

export { RequestValidationError } from './api/client.js';
export type { CallOptions } from './context.js';
export * from './contract/index.js';
export {
  ApiError,
  AuthError,
  CancelError,
  CliError,
  ExitCode,
  NetworkError,
  ResponseError,
  UsageError,
} from './errors.js';

export interface ClientOptions extends Omit<
  ApiClientOptions,
  'baseUrl' | 'apiKey' | 'env' | 'noKeyMessage' | 'sleep' | 'fastExit'
> {
  /** Default http://127.0.0.1:8787 (`facectl serve`). */
  baseUrl?: string;
  apiKey?: string;
  /** Where HTTP_PROXY / HTTPS_PROXY / NO_PROXY are read from; default process.env. */
  env?: Readonly<Record<string, string | undefined>>;
}

// A route without path parameters accepts an empty object: then the method takes no params argument.
type HasParams<R extends AnyRoute> = Record<never, never> extends ParamsOf<R> ? false : true;
type HasBody<R extends AnyRoute> = R['body'] extends undefined ? false : true;

/** The method for one route: (params?, body?, options?) as the route needs them. */
export type RouteMethod<R extends AnyRoute> =
  HasParams<R> extends true
    ? HasBody<R> extends true
      ? (params: ParamsOf<R>, body: BodyOf<R>, options?: CallOptions) => Promise<AnswerOf<R>>
      : (params: ParamsOf<R>, options?: CallOptions) => Promise<AnswerOf<R>>
    : HasBody<R> extends true
      ? (body: BodyOf<R>, options?: CallOptions) => Promise<AnswerOf<R>>
      : (options?: CallOptions) => Promise<AnswerOf<R>>;

export type FacectlClient = { [K in RouteName]: RouteMethod<Routes[K]> } & {
  readonly baseUrl: string;
  /** Calls any route object (e.g. one from `facectl/contract`). */
  call: ApiClient['call'];
  /** Closes the connections (keep-alive would hold the process open for a few seconds). */
  close(): Promise<void>;
};

export function createClient(options: ClientOptions = {}): FacectlClient {
  const { baseUrl = DEFAULT_BASE_URL, env = process.env, ...rest } = options;
  const api = createApiClient({ ...rest, baseUrl, env, noKeyMessage: 'no API key: pass createClient({ apiKey })' });
  const client: Record<string, unknown> = { baseUrl: api.baseUrl, call: api.call.bind(api), close: () => api.close() };
  for (const [name, route] of Object.entries(routes) as [RouteName, AnyRoute][]) {
    const hasParams = pathParamNames(route.path).length > 0;
    const hasBody = route.body !== undefined;
    client[name] = (...args: unknown[]) => {
      const params = hasParams ? args.shift() : {};
      const body = hasBody ? args.shift() : undefined;
      const callOptions = args.shift() as CallOptions | undefined;
      return api.call(route, { params: params as never, body: body as never }, callOptions);
    };
  }
  return client as FacectlClient;
}
