import { verb } from './kit.js';
import { errorFromResponse } from '../api/error-mapping.js';
import type { Context, RawResponse } from '../context.js';
import { type AnyRoute, matchPath } from '../contract/route.js';
import { UsageError } from '../errors.js';
import { jsonIndent } from '../io/output.js';
import { type Field, fieldsToObject, fieldsToQuery, parseField, parseHeaders } from './api-fields.js';

/**
 * `facectl api [METHOD] <PATH>`: any endpoint, for what no verb covers, with gh's `api` flags:
 * -X METHOD, -H 'Name: value', -f/-F fields (a JSON body, or the query string of a GET), --input FILE|-,
 * -i (status line and headers), --raw (no contract checks). The query string is sent as given.
 * A path a contract route matches is checked against it (request before sending, answer on arrival,
 * Idempotency-Key on creating POSTs) unless --raw; any other path is sent as given, with a warning.
 * Non-2xx answers exit as the exit-code table says (a 3xx is exit 1: facectl follows no redirects).
 */

const METHOD = /^[A-Za-z]+$/;

export interface ApiCommandOptions {
  method?: string | undefined;
  path: string;
  input?: string | undefined;
  headers?: readonly string[];
  rawFields?: readonly string[];
  typedFields?: readonly string[];
  include?: boolean;
  raw?: boolean;
}

export default verb({
  description: 'Send a request to any endpoint; known paths are validated against the contract.',
  args: [
    ['<method-or-path>', 'GET, POST, PATCH, DELETE... (or give -X), or the path when the method is left out'],
    ['[path]', 'path under the base URL (query string kept), e.g. /v1/faces/ada-lovelace'],
  ],
  flags: {
    method: { short: '-X', value: '<method>', help: 'the HTTP method (default GET, or POST with a body or fields)' },
    header: { short: '-H', value: '<header>', repeat: true, help: "add a request header 'Name: value' (repeatable)" },
    rawField: {
      short: '-f',
      value: '<key=value>',
      repeat: true,
      help: 'add a string field to the JSON body, or to the query of a GET',
    },
    field: {
      short: '-F',
      value: '<key=value>',
      repeat: true,
      help: 'add a typed field: true/false/null/integers as JSON, @file reads a file',
    },
    input: { value: '<file>', help: 'request body: a file, or - for standard input' },
    include: { short: '-i', help: 'print the status line and the response headers before the body' },
    raw: { help: 'no contract checks: send as given, print the answer as received' },
  },
  examples: [
    'facectl api /v1/auth/api-keys/current',
    'facectl api -X POST /v1/faces -f name=Ada -f alias=ada',
    "facectl api -i GET '/v1/faces/ada?fields=name'",
    'echo \'{"messages": []}\' | facectl api PATCH /v1/compile/threads/thr_123/messages --input -',
  ],
  async run(ctx, given, first, second) {
    let positionalMethod: string | undefined;
    let path = first;
    if (second !== undefined) {
      positionalMethod = first;
      path = second;
    } else if (METHOD.test(first)) {
      throw new UsageError("missing required argument 'path'");
    }
    if (positionalMethod !== undefined && given.method !== undefined) {
      throw new UsageError(`the method is given twice: ${positionalMethod} and -X ${given.method}`, {
        hint: 'give it once, as -X METHOD or before the path',
      });
    }
    await runApi(ctx, {
      method: positionalMethod ?? given.method,
      path,
      input: given.input,
      headers: given.header ?? [],
      rawFields: given.rawField ?? [],
      typedFields: given.field ?? [],
      include: given.include,
      raw: given.raw,
    });
  },
});

export async function runApi(ctx: Context, options: ApiCommandOptions): Promise<unknown> {
  const [client, { notAnAnswer, readAnswer, validateRequest }, { debugOption }, { routes }, { parseJson }, input] =
    await Promise.all([
      ctx.api(),
      import('../api/client.js'),
      import('../api/context-client.js'),
      import('../contract/index.js'),
      import('../input/json.js'),
      import('../input/source.js'),
    ]);
  const { readSourceText, resolveSource } = input;
  if (!client.request) throw new UsageError('this client cannot send requests outside the interface');
  const target = relativeTarget(options.path, client.baseUrl);
  const headers = parseHeaders(options.headers ?? []);
  let stdinTaken = false;
  const takeStdin = (what: string) => {
    if (stdinTaken) throw new UsageError(`${what}: standard input is already read by another flag`);
    stdinTaken = true;
  };
  const readFile = async (path: string) => {
    if (path === '-') takeStdin('-F key=@-');
    return readSourceText(await resolveSource(ctx, path, 'pipe the value in, or give -F key=@FILE'));
  };
  const fields: Field[] = [];
  for (const text of options.rawFields ?? []) fields.push(await parseField(text, '-f', readFile));
  for (const text of options.typedFields ?? []) fields.push(await parseField(text, '-F', readFile));

  let bodyText: string | undefined;
  let body: unknown;
  if (options.input !== undefined) {
    if (options.input === '-') takeStdin('--input -');
    const source = await resolveSource(ctx, options.input, 'pipe the body in, or give --input FILE');
    bodyText = await readSourceText(source);
    if (!options.raw) body = parseJson(bodyText, { source: source.name });
  }
  const method = (options.method ?? (bodyText !== undefined || fields.length > 0 ? 'POST' : 'GET')).toUpperCase();
  if (!METHOD.test(method)) throw new UsageError(`not an HTTP method: ${JSON.stringify(options.method)}`);
  if (method === 'CONNECT') {
    throw new UsageError(
      '-X CONNECT: facectl does not send CONNECT (it opens a tunnel through a proxy, not a request)',
      {
        hint: 'use GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS',
      },
    );
  }

  // As gh does: fields go to the query string of a GET (or HEAD), or when --input already is the body.
  let query = target.search.replace(/^\?/, '');
  if (fields.length > 0) {
    if (method === 'GET' || method === 'HEAD' || bodyText !== undefined) {
      query = [query, fieldsToQuery(fields)].filter(Boolean).join('&');
    } else {
      body = fieldsToObject(fields);
      bodyText = JSON.stringify(body);
    }
  }
  const pathWithQuery = `${target.pathname}${query ? `?${query}` : ''}`;

  const match = findRoute(method, target.pathname, Object.values(routes) as AnyRoute[]);
  let route: AnyRoute | undefined;
  if (options.raw) {
    // Sent as given, answer shown as received.
  } else if (match) {
    route = match.route;
    validateRequest(route, 'params', route.params, match.params);
    if (bodyText !== undefined && !route.body) {
      throw new UsageError(`${method} ${route.path} takes no request body; drop --input and the fields`);
    }
    if (route.body) validateRequest(route, 'body', route.body, body);
    if (route.idempotent && headers['idempotency-key'] === undefined) {
      headers['idempotency-key'] = (await import('node:crypto')).randomUUID();
    }
  } else {
    ctx.out.warn(`no route of the interface matches ${method} ${target.pathname}; sending it without validation`);
  }

  const answer = await client.request({
    method,
    path: pathWithQuery,
    ...(bodyText === undefined ? {} : { bodyText }),
    headers,
    anyStatus: true,
  });
  if (options.include) ctx.out.text(statusAndHeaders(answer, (await import('node:http')).STATUS_CODES));
  const where = `${method} ${target.pathname}`;
  const info = { method, path: route?.path ?? target.pathname, baseUrl: client.baseUrl };
  const ok = answer.status >= 200 && answer.status < 300;
  if (!ok && options.include) printBody(ctx, answer.body);
  if (answer.status >= 400) throw errorFromResponse(answer.status, answer.body, info);
  if (!ok) throw notAnAnswer(answer, where);
  // A known route's answer is read as every command reads it (api/answers.ts): a field it needs must be
  // there; another that deviates is read as absent, and --debug says so.
  const result =
    route && route.responseKind === 'json' ? await readAnswer(route, answer.body, debugOption(ctx).debug) : answer.body;
  printBody(ctx, result);
  return result;
}

/**
 * A JSON answer as every --json document is printed (with or without --json, as gh api does): indented
 * on a terminal, one line when piped. A text answer is printed as received.
 */
function printBody(ctx: Context, body: unknown): void {
  if (body === '' || body === undefined) return;
  ctx.out.text(
    typeof body === 'string'
      ? body.endsWith('\n')
        ? body
        : `${body}\n`
      : `${JSON.stringify(body, null, jsonIndent(ctx.io))}\n`,
  );
}

/** `-i`: the status line and the headers, as received, then an empty line. */
function statusAndHeaders(answer: RawResponse, STATUS_CODES: Record<number, string | undefined>): string {
  const lines = [`HTTP/1.1 ${answer.status} ${answer.statusText || STATUS_CODES[answer.status] || ''}`.trimEnd()];
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${one}`);
  }
  return `${lines.join('\n')}\n\n`;
}

/**
 * A path, or a full URL on the configured origin: the key is never sent anywhere else. Tabs and line
 * breaks, which the URL parser drops without a word, are sent percent-encoded (`%09`), as given.
 */
function relativeTarget(given: string, baseUrl: string): { pathname: string; search: string } {
  const path = given.replace(/[\t\n\r]/g, encodeURIComponent);
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

function findRoute(
  method: string,
  pathname: string,
  routes: readonly AnyRoute[],
): { route: AnyRoute; params: Record<string, string> } | undefined {
  for (const route of routes) {
    if (route.method !== method) continue;
    const params = matchPath(route.path, pathname);
    if (params) return { route, params };
  }
  return undefined;
}
