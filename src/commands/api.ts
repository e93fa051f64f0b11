import { verb } from './kit.js';
import type { Flags } from './verb.js';
import { errorFromResponse } from '../api/error-mapping.js';
import type { Context, RawResponse } from '../context.js';
import { type AnyRoute, matchPath } from '../contract/route.js';
import { CliError, UsageError, withoutKeys } from '../errors.js';
import { jsonIndent } from '../io/output.js';

const METHOD = /^[A-Za-z]+$/;

const flags = {
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
  include: {
    short: '-i',
    help: 'print the status line and the response headers before the body (--json: one {"status", "headers", "body"})',
  },
  raw: { help: 'no contract checks: send as given, print the answer as received' },
} as const satisfies Flags;

export default verb({
  description: 'Send a request to any endpoint; known paths are validated against the contract.',
  args: [
    ['<method-or-path>', 'GET, POST, PATCH, DELETE... (or give -X), or the path when the method is left out'],
    ['[path]', 'path under the base URL (query string kept), e.g. /v1/faces/ada-lovelace'],
  ],
  flags,
  examples: [
    'facectl api /v1/auth/api-keys/current',
    'facectl api -X POST /v1/faces -f name=Ada -f alias=ada',
    "facectl api -i GET '/v1/faces/ada?fields=name'",
    'echo \'{"messages": []}\' | facectl api PATCH /v1/compile/threads/thr_123/messages --input -',
  ],
  async run(ctx, given, first, second) {
    if (second === undefined && METHOD.test(first)) throw new UsageError("missing required argument 'path'");
    const [positionalMethod, path] = second === undefined ? [undefined, first] : [first, second];
    if (positionalMethod !== undefined && given.method !== undefined) {
      throw new UsageError(`the method is given twice: ${positionalMethod} and -X ${given.method}`, {
        hint: 'give it once, as -X METHOD or before the path',
      });
    }
    const options = { ...given, method: positionalMethod ?? given.method };
    const [client, { notAnAnswer, readAnswer, validateRequest }, { debugOption }, { routes }, { parseJson }, source] =
      await Promise.all([
        ctx.api(),
        import('../api/client.js'),
        import('../api/context-client.js'),
        import('../contract/index.js'),
        import('../input/json.js'),
        import('../input/source.js'),
      ]);
    const { readSourceText, resolveSource } = source;
    const target = relativeTarget(path, client.baseUrl);
    const headers = parseHeaders(options.header ?? []);
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
    for (const text of options.rawField ?? []) fields.push(await parseField(text, '-f', readFile));
    for (const text of options.field ?? []) fields.push(await parseField(text, '-F', readFile));

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
        { hint: 'use GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS' },
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

    const match = options.raw ? undefined : findRoute(method, target.pathname, routes);
    const route = match?.route;
    if (match && route) {
      validateRequest(route, 'params', route.params, match.params);
      if (bodyText !== undefined && !route.body) {
        throw new UsageError(`${method} ${route.path} takes no request body; drop --input and the fields`);
      }
      if (route.body) validateRequest(route, 'body', route.body, body);
      if (route.idempotent && headers['idempotency-key'] === undefined) {
        headers['idempotency-key'] = (await import('node:crypto')).randomUUID();
      }
    } else if (!options.raw) {
      // Every route's path begins with /v1: a path without it that matches once given it is named.
      const meant = findRoute(method, `/v1${target.pathname}`, routes) ? ` (did you mean /v1${target.pathname}?)` : '';
      ctx.out.warn(
        `no route of the interface matches ${method} ${target.pathname}${meant}; sending it without validation`,
      );
    }

    const answer = await client.request({ method, path: pathWithQuery, bodyText, headers, anyStatus: true });
    if (options.include && !ctx.out.json)
      ctx.out.text(statusAndHeaders(answer, (await import('node:http')).STATUS_CODES));
    const head = options.include ? answer : undefined;
    // A path no route describes is not taken for the route it begins like (a 404 there is no endpoint, not no face).
    const info = { method, path: route?.path ?? target.pathname, baseUrl: client.baseUrl, outsideContract: !route };
    const ok = answer.status >= 200 && answer.status < 300;
    // An error's body may quote the key back (a hostile or echoing server): cut to its prefix, as errors are.
    if (!ok && head) printBody(ctx, answer.body, undefined, withoutKeys, head);
    if (answer.status >= 400) throw errorFromResponse(answer.status, answer.body, info);
    if (!ok) throw notAnAnswer(answer, `${method} ${target.pathname}`);
    // A known route's answer is read as commands read it (api/answers.ts): needed fields required, others lenient.
    const result =
      route?.responseKind === 'json' ? await readAnswer(route, answer.body, debugOption(ctx).debug) : answer.body;
    const changed = method !== 'GET' && method !== 'HEAD';
    const written = changed ? `${method} ${target.pathname} answered ${answer.status} all the same` : undefined;
    // A new key's secret is shown only now: a --jq filter that fails or leaves it out says so, as `keys create` does.
    const secret = route?.name === 'createApiKey' ? (result as { key?: unknown }).key : undefined;
    try {
      printBody(ctx, result, written, undefined, head);
    } catch (error) {
      if (typeof secret !== 'string' || !(error instanceof CliError) || error.code !== 'jq_error') throw error;
      ctx.io.stdout.write(`${JSON.stringify(result)}\n`);
      throw new CliError(error.message, error.exitCode, {
        code: error.code,
        hint: `${written}: the key was created; its whole answer is printed instead, as its secret is shown only now`,
      });
    }
    if (typeof secret === 'string' && ctx.globals.jq !== undefined) {
      const { jqShows, SECRET_LEFT_OUT } = await import('../io/jq.js');
      const seen = head ? { status: head.status, headers: head.headers, body: result } : result;
      if (!(await jqShows(ctx.globals.jq, seen, secret)))
        ctx.out.warn(`${SECRET_LEFT_OUT} (\`keys create --save\` keeps it)`);
    }
  },
});

/**
 * A JSON answer indented on a terminal, one line when piped (as gh api does, --json or not); text as received.
 * With -i (`head`) under --json, one document: the status, the headers (by lower-case name) and the body.
 */
function printBody(ctx: Context, body: unknown, written?: string, shown = (text: string) => text, head?: RawResponse) {
  if (head && ctx.out.json)
    body = { status: head.status, headers: head.headers, body: body === '' ? null : (body ?? null) };
  if (body === '' || body === undefined) return;
  const text = shown(typeof body === 'string' ? body : JSON.stringify(body, null, jsonIndent(ctx.io)));
  ctx.out.text(text.endsWith('\n') ? text : `${text}\n`, written);
}

function statusAndHeaders(answer: RawResponse, STATUS_CODES: Record<number, string | undefined>): string {
  const lines = [`HTTP/1.1 ${answer.status} ${answer.statusText || STATUS_CODES[answer.status] || ''}`.trimEnd()];
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${one}`);
  }
  return `${lines.join('\n')}\n\n`;
}

/** A path, or a URL on the configured origin (the key goes nowhere else); tabs and newlines (URL drops) encoded. */
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
  return new URL(path, 'http://placeholder');
}

function findRoute(method: string, pathname: string, routes: Record<string, AnyRoute>) {
  for (const route of Object.values(routes)) {
    const params = route.method === method ? matchPath(route.path, pathname) : null;
    if (params) return { route, params };
  }
  return undefined;
}

/**
 * A -f/-F flag as gh's `api` reads them: -f a string, -F typed (true, false, null, integers as JSON; @file reads a
 * file). Keys nest: `a[b]=x` is {"a":{"b":"x"}}, `tags[]=x` appends; `path` is the key's parts, '' an append.
 */
type Field = { key: string; path: string[]; value: unknown; flag: '-f' | '-F' };

/** Headers facectl sets itself from the body it sends, or that would change how the connection works. */
const RESERVED = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** What a header's value must not hold; undici refused control characters only once under way (read as exit 8). */
const VALUE_RULES: readonly (readonly [RegExp, string, string?])[] = [
  [/[\r\n\0]/, 'line breaks'],
  [/[\x00-\x08\x0a-\x1f\x7f]/, 'control characters (other than tab)'],
  [/[^\x00-\xff]/, 'characters beyond U+00FF', 'percent-encode the text, or send it in the body'],
];

/** Headers by lower-case name; a later -H of the same name replaces an earlier one. */
function parseHeaders(list: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const text of list) {
    const colon = text.indexOf(':');
    const name = colon > 0 ? text.slice(0, colon).trim() : '';
    const value = colon > 0 ? text.slice(colon + 1).trim() : '';
    if (!TOKEN.test(name)) {
      throw new UsageError(`-H ${JSON.stringify(text)}: expected 'Name: value'`, {
        hint: "e.g. -H 'Accept: application/json'",
      });
    }
    for (const [rule, what, hint] of VALUE_RULES) {
      if (rule.test(value)) throw new UsageError(`-H ${name}: the value must not contain ${what}`, { hint });
    }
    if (RESERVED.has(name.toLowerCase())) throw new UsageError(`-H ${name}: facectl sets this header itself`);
    if (name.toLowerCase() === 'expect') {
      throw new UsageError(`-H ${name}: facectl does not send an Expect header (the body is sent with the request)`, {
        hint: `drop -H ${name}`,
      });
    }
    headers[name.toLowerCase()] = value;
  }
  return headers;
}

async function parseField(text: string, flag: '-f' | '-F', read: (path: string) => Promise<string>): Promise<Field> {
  const eq = text.indexOf('=');
  if (eq <= 0)
    throw new UsageError(`${flag} ${JSON.stringify(text)}: expected key=value`, { hint: `e.g. ${flag} name=Ada` });
  const key = text.slice(0, eq);
  const raw = text.slice(eq + 1);
  return { key, path: parseKey(key, flag), value: flag === '-f' ? raw : await typedValue(raw, read), flag };
}

function parseKey(key: string, flag: string): string[] {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!match) {
    throw new UsageError(`${flag} ${key}: the key must be a name, optionally followed by [name] or []`, {
      hint: "e.g. -F 'metadata[source]=cli' or -f 'tags[]=one'",
    });
  }
  const parts = [match[1] as string, ...[...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] as string)];
  // `a[]` may only close the key: `a[][b]` would leave open which element `b` belongs to.
  if (parts.slice(0, -1).some((part) => part === '')) {
    throw new UsageError(`${flag} ${key}: [] may only come last in a key`);
  }
  return parts;
}

async function typedValue(raw: string, readFile: (path: string) => Promise<string>): Promise<unknown> {
  if (raw === 'true' || raw === 'false' || raw === 'null') return JSON.parse(raw);
  if (/^-?(0|[1-9]\d*)$/.test(raw) && Number.isSafeInteger(Number(raw))) return Number(raw);
  if (raw.startsWith('@')) return readFile(raw.slice(1));
  return raw;
}

function fieldsToObject(fields: readonly Field[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const field of fields) {
    // Assigning `__proto__` would change the object's prototype instead of adding a key: refused.
    if (field.path.includes('__proto__')) {
      throw new UsageError(`${field.flag} ${field.key}: __proto__ cannot be sent as a field; use --input`);
    }
    let node: Record<string, unknown> = root;
    // parseKey lets '' (an append) come only last.
    for (let i = 0; i < field.path.length - 1; i++) {
      const part = field.path[i] as string;
      const child = node[part];
      if (field.path[i + 1] === '') {
        if (child !== undefined && !Array.isArray(child)) throw conflict(field);
        node[part] = [...((child as unknown[] | undefined) ?? []), field.value];
      } else {
        if (child === undefined) node[part] = {};
        else if (typeof child !== 'object' || child === null || Array.isArray(child)) throw conflict(field);
        node = node[part] as Record<string, unknown>;
      }
    }
    const leaf = field.path.at(-1) as string;
    if (leaf !== '') node[leaf] = field.value;
  }
  return root;
}

const conflict = (field: Field): UsageError =>
  new UsageError(`${field.flag} ${field.key}: conflicts with an earlier field of the same name`);

function fieldsToQuery(fields: readonly Field[]): string {
  const query = new URLSearchParams();
  for (const { key, value } of fields) query.append(key, typeof value === 'string' ? value : JSON.stringify(value));
  return query.toString();
}
