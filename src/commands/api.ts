import type { Context } from '../context.js';
import { routes } from '../contract/index.js';
import { type AnyRoute, matchPath } from '../contract/route.js';
import { UsageError } from '../errors.js';
import { parseJson } from '../input/json.js';
import { readSourceText, resolveSource } from '../input/source.js';

/**
 * `facectl api <METHOD> <PATH> [--input FILE|-]`: any endpoint, for what no verb covers. A path that a
 * contract route matches goes through that route (request validated before sending, Idempotency-Key on
 * creating POSTs, response validated). A path no route matches is still sent, as given and without
 * validation, with a warning: the service may know endpoints this facectl does not.
 * The answer is printed as JSON on stdout (text for HTML answers).
 */

const METHODS = ['GET', 'POST', 'PATCH', 'DELETE'] as const;

export interface ApiCommandOptions {
  method: (typeof METHODS)[number];
  path: string;
  input?: string | undefined;
}

export async function apiAction(
  ctx: Context,
  raw: Record<string, unknown>,
  method: string,
  path: string,
): Promise<void> {
  const upper = method.toUpperCase();
  if (!(METHODS as readonly string[]).includes(upper)) {
    throw new UsageError(`unsupported method ${JSON.stringify(method)}: use ${METHODS.join(', ')}`);
  }
  await runApi(ctx, {
    method: upper as ApiCommandOptions['method'],
    path,
    input: typeof raw.input === 'string' ? raw.input : undefined,
  });
}

export async function runApi(ctx: Context, options: ApiCommandOptions): Promise<unknown> {
  const client = await ctx.api();
  const target = relativeTarget(options.path, client.baseUrl);
  let body: unknown;
  if (options.input !== undefined) {
    const source = await resolveSource(ctx, options.input, 'pipe the JSON body in, or give --input FILE');
    body = parseJson(await readSourceText(source), { source: source.name });
  }

  const match = findRoute(options.method, target.pathname);
  let result: unknown;
  if (match) {
    if (body !== undefined && !match.route.body) {
      throw new UsageError(`${options.method} ${match.route.path} takes no request body; drop --input`);
    }
    if (target.search)
      ctx.out.warn(`the query string ${target.search} is not part of ${match.route.name}; it was dropped`);
    result = await client.call(match.route, { params: match.params, body: body as never });
  } else {
    ctx.out.warn(
      `no route of the interface matches ${options.method} ${target.pathname}; sending it without validation`,
    );
    if (!client.request) throw new UsageError('this client cannot send requests outside the interface');
    const answer = await client.request({
      method: options.method,
      path: `${target.pathname}${target.search}`,
      ...(body === undefined ? {} : { body }),
    });
    result = answer.body;
  }
  ctx.out.text(
    typeof result === 'string'
      ? result.endsWith('\n')
        ? result
        : `${result}\n`
      : `${JSON.stringify(result, null, 2)}\n`,
  );
  return result;
}

/** A path, or a full URL on the configured origin: the key is never sent anywhere else. */
function relativeTarget(path: string, baseUrl: string): { pathname: string; search: string } {
  const base = new URL(baseUrl);
  if (/^[a-z][a-z0-9+.-]*:/i.test(path)) {
    const url = new URL(path);
    if (url.origin !== base.origin) {
      throw new UsageError(`refusing to send the API key to ${url.origin}: the configured service is ${base.origin}`, {
        hint: 'give a path (e.g. /v1/faces/ada), or change --base-url',
      });
    }
    const basePath = base.pathname.replace(/\/$/, '');
    return { pathname: url.pathname.slice(basePath.length) || '/', search: url.search };
  }
  if (!path.startsWith('/')) throw new UsageError(`the path must start with /: ${path}`, { hint: 'e.g. /v1/faces' });
  const url = new URL(path, 'http://placeholder');
  return { pathname: url.pathname, search: url.search };
}

function findRoute(method: string, pathname: string): { route: AnyRoute; params: Record<string, string> } | undefined {
  for (const route of Object.values(routes) as AnyRoute[]) {
    if (route.method !== method) continue;
    const params = matchPath(route.path, pathname);
    if (params) return { route, params };
  }
  return undefined;
}
